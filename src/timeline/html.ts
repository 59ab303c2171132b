/** Text made safe for HTML content and attribute values. */
export function esc(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** Milliseconds since the run started, as a person reads them. */
export function since(ms: number): string {
  if (ms < 1000) return `+${ms} ms`;
  if (ms < 60_000) return `+${(ms / 1000).toFixed(1)} s`;
  return `+${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

// Inline and script-free, so a written file opens anywhere, offline, and a served page needs no
// other request (the empty icon link keeps the browser from asking for /favicon.ico): one file is the whole view.
const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1d2430;background:#fafbfc}
h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.1em;margin:1.6em 0 .5em}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{border:1px solid #d8dde4;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#eef1f5}code,pre{font:12px ui-monospace,monospace}pre{white-space:pre-wrap;margin:0}
.badge{display:inline-block;padding:0 6px;border-radius:8px;background:#e3e8ef;font-size:12px}
.stopped td{background:#fde8e8}.warned td{background:#fff6db}.cached td{background:#e6f4ea}
.note td{color:#5a6472;font-size:12px;background:#f4f6f8}
.rule{font-weight:600;color:#a11}.state-STOPPED_LOOP_GUARD,.state-FAILED{background:#f6c7c7}
.state-NEEDS_HUMAN{background:#fde2b0}.state-COMPLETED{background:#c9ecd4}.state-PARTIAL{background:#e0e0f8}
.report{background:#fff;border:1px solid #e3a5a5;padding:.6em 1em}.meta span{margin-right:1.2em}
figure{margin:0}.charts{display:flex;flex-wrap:wrap;gap:1em}.chart{background:#fff;border:1px solid #d8dde4;padding:.4em}
form label{margin-right:1em}a{color:#1f5fbf}
`;

/** A complete HTML document with the shared style. */
export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<link rel="icon" href="data:,"><title>${esc(title)}</title><style>${STYLE}</style></head>
<body>
${body}
</body></html>
`;
}
