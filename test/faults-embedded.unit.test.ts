import { faultScenarios } from './faults-scenarios.js';

faultScenarios('embedded log', (dataDir) => ({ kind: 'embedded', dataDir }), 60_000);
