import type { JSX } from 'preact';
import type { FnOutput } from '../../src/sdk/types.ts';

type LogLine = FnOutput<'getAppLogsForCli'>['lines'][number];

// Apps and build tools colour their output with ANSI SGR codes; the logs view renders the 16 basic colours and
// bold as spans (classes in styles.css) and drops every other escape sequence.

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escape sequences start with ESC
const ESC = /\x1b\[([0-9;]*)m|\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;

type Style = { fg: number | null; bold: boolean };

function apply(style: Style, params: string): Style {
  const s = { ...style };
  for (const p of (params || '0').split(';').map(Number)) {
    if (p === 0) {
      s.fg = null;
      s.bold = false;
    } else if (p === 1) s.bold = true;
    else if (p === 22) s.bold = false;
    else if (p === 39) s.fg = null;
    else if ((p >= 30 && p <= 37) || (p >= 90 && p <= 97)) s.fg = p;
  }
  return s;
}

/** One line of output as text and coloured spans. */
export function AnsiLine(props: { text: string }): JSX.Element {
  const parts: (string | JSX.Element)[] = [];
  let style: Style = { fg: null, bold: false };
  let last = 0;
  const push = (text: string) => {
    if (!text) return;
    if (style.fg === null && !style.bold) parts.push(text);
    else
      parts.push(
        <span
          class={`${style.fg === null ? '' : `ansi-${style.fg}`}${style.bold ? ' ansi-bold' : ''}`.trim()}
        >
          {text}
        </span>,
      );
  };
  for (const m of props.text.matchAll(ESC)) {
    push(props.text.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[1] !== undefined) style = apply(style, m[1]);
  }
  push(props.text.slice(last));
  return <>{parts}</>;
}

/** Log lines as the terminal showed them: time, stream when not stdout, ANSI colours rendered. */
export function LogLines(props: { lines: LogLine[]; labelledBy: string; testId: string }) {
  return (
    <pre class="logs" role="log" aria-labelledby={props.labelledBy} data-testid={props.testId}>
      {props.lines.map((l) => (
        <span key={l.id}>
          {`${l.ts.slice(11, 19)} ${l.stream === 'stdout' ? '' : `[${l.stream}] `}`}
          <AnsiLine text={l.line} />
          {'\n'}
        </span>
      ))}
    </pre>
  );
}
