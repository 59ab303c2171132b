/**
 * A general, documented test for "this tool result reports an error", standing in for OpenHands'
 * `ErrorObservation` (which the runtime creates when a tool fails) on recorded text results.
 *
 * A result is an error when its text (whitespace-trimmed) matches any of:
 * 1. it STARTS with the word error / exception / fatal (any case) followed by ':', '-', '[' or '('
 *    ("Error: payment method not found", "ERROR - ...", "Fatal: ..."), or with a Python
 *    "Traceback (most recent call last)"; prose that merely begins with such a word ("Fatal Vision
 *    is a book ...") is not;
 * 2. a JSON member "error" whose value is a NON-EMPTY string or an object
 *    (`{"error": "Timeout error..."}`, `{"error": {"code": 1}}`); an empty `"error": ""`, as in every
 *    ToolBench response envelope `{"error": "", "response": ...}`, is NOT an error, and neither is a
 *    value cut off right after its opening quote (`{"error": "` at the end of a truncated result);
 * 3. a language exception marker: `SomethingError:` / `SomethingException:` (capitalized, e.g.
 *    "ValueError:", "KeyError:") or the phrase "exception:" (e.g. "... generated an exception: Unknown
 *    tool name").
 * Not errors: search misses phrased as data ("Could not find [x]. Similar: [...]", "No Results"),
 * empty results, and ordinary prose that merely contains the word "error".
 */
const LEADING_ERROR_WORD = /^(?:(?:error|exception|fatal)\s*[:\-[(]|traceback \(most recent call last\))/i;
const JSON_ERROR_MEMBER = /"error"\s*:\s*(?:"[^"]|\{)/;
const CAPITALIZED_EXCEPTION_MARKER = /\b[A-Z]\w*(?:Error|Exception):/;
const LOWERCASE_EXCEPTION_PHRASE = /\bexception:\s/i;

export function looksLikeErrorResult(result: string): boolean {
  const text = result.trim();
  if (text.length === 0) return false;
  if (LEADING_ERROR_WORD.test(text)) return true;
  if (JSON_ERROR_MEMBER.test(text)) return true;
  return CAPITALIZED_EXCEPTION_MARKER.test(text) || LOWERCASE_EXCEPTION_PHRASE.test(text);
}
