#!/usr/bin/env node
// The installed command runs the compiled CLI (npm run build); in this repo, `npm run loopguard -- ...` runs the sources.
import { runCli } from '../dist/cli/main.js';

runCli();
