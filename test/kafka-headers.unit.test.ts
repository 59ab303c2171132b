import { describe, expect, it } from 'vitest';
import { headersToStrings } from '../src/log/kafka/kafka-error.js';
import { RUN_HEADERS } from '../src/log/kafka/run-batch-fold.js';

describe('headersToStrings', () => {
  const headers = {
    'loopguard.type': Buffer.from('ToolCallRequested'),
    'loopguard.seq': Buffer.from('7'),
    'loopguard.batch': ['old', Buffer.from('b-2')],
    absent: undefined,
  };

  it('converts every header, the last value of a repeated one, and skips undefined ones', () => {
    expect(headersToStrings(headers)).toEqual({
      'loopguard.type': 'ToolCallRequested',
      'loopguard.seq': '7',
      'loopguard.batch': 'b-2',
    });
    expect(headersToStrings(undefined)).toBeUndefined();
    expect(headersToStrings({ absent: undefined })).toBeUndefined();
  });

  it('with `only`, converts those headers and no others (what a rebuild scan asks for)', () => {
    expect(headersToStrings(headers, RUN_HEADERS)).toEqual({
      'loopguard.seq': '7',
      'loopguard.batch': 'b-2',
    });
    expect(headersToStrings(headers, ['absent', 'nowhere'])).toBeUndefined();
  });
});
