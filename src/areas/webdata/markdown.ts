/// <reference path="./turndown-plugin-gfm.d.ts" />
import TurndownService from 'turndown';
import { strikethrough, taskListItems } from 'turndown-plugin-gfm';

// HTML → markdown: turndown with ATX headings, `-` bullets and our own rules where turndown's (and the GFM
// plugin's) lose what readers of documentation need:
// - every <pre> is a fenced block, whatever wraps it (Sphinx and most static site generators write
//   `<div class="highlight-python"><div class="highlight"><pre>` with no <code>), its text taken verbatim
//   and its language read from the classes of the <pre>, its <code> or the wrappers around it;
// - tables are GFM tables with one line per row: a cell's paragraphs and line breaks become `<br>`, pipes
//   are escaped, short rows are padded, so the result is still a table when cells hold several blocks;
// - links keep their #fragment (a table of contents is a list of links into one page).

type El = HTMLElement;

const LANG_CLASS = /(?:^|\s)(?:language|lang|highlight|brush:?)-([\w+#.-]+)/i;
const NOT_A_LANGUAGE = new Set([
  'default',
  'none',
  'plain',
  'plaintext',
  'text',
  'nohighlight',
  'notranslate',
]);

/** A <pre>'s text verbatim, with its <br>s as line breaks (DOCX code through mammoth, some CMSs). */
function preText(node: El): string {
  let out = '';
  for (const c of Array.from(node.childNodes)) {
    if (c.nodeType === 3) out += c.nodeValue ?? '';
    else if (c.nodeName === 'BR') out += '\n';
    else if (c.nodeType === 1) out += preText(c as El);
  }
  return out;
}

/** The language a code block declares through a class on it, its <code> or up to two wrappers. */
export function codeLanguage(pre: El): string {
  const code = pre.firstElementChild?.nodeName === 'CODE' ? pre.firstElementChild : null;
  const parent = pre.parentElement;
  for (const el of [pre, code, parent, parent?.parentElement]) {
    const m = LANG_CLASS.exec(el?.getAttribute?.('class') ?? '');
    if (m?.[1] && !NOT_A_LANGUAGE.has(m[1].toLowerCase())) return m[1].toLowerCase();
  }
  return '';
}

function fenced(text: string, lang: string): string {
  const code = text.replace(/^\n+/, '').replace(/\s+$/, '');
  const longest = Math.max(0, ...(code.match(/`+/g) ?? []).map((r) => r.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `\n\n${fence}${lang}\n${code}\n${fence}\n\n`;
}

// A cell's own markdown on one line: blocks and breaks joined with <br>, pipes escaped.
function cellText(content: string): string {
  return content
    .trim()
    .replace(/[ \t]*\n[\s]*/g, '<br>')
    .replace(/(?<!\\)\|/g, '\\|');
}

// Unescaped pipes separate cells; a row `| a | b |` has two.
const cellCount = (row: string) => (row.match(/(?<!\\)\|/g)?.length ?? 1) - 1;

function tableMarkdown(content: string): string {
  const lines = content.split('\n').filter((l) => l.trim() !== '');
  const rows = lines.filter((l) => l.startsWith('|'));
  const other = lines.filter((l) => !l.startsWith('|')); // a <caption>
  if (rows.length === 0) return `\n\n${content.trim()}\n\n`;
  const width = Math.max(...rows.map(cellCount));
  // A one-cell table is layout, not data: its content stands on its own.
  if (rows.length === 1 && width === 1) return `\n\n${rows[0]!.replace(/^\|\s?|\s?\|$/g, '')}\n\n`;
  const padded = rows.map((r) => r + ' |'.repeat(width - cellCount(r)));
  const head = `${padded[0]}\n|${' --- |'.repeat(width)}`;
  const caption = other.length ? `${other.join(' ').trim()}\n\n` : '';
  return `\n\n${caption}${[head, ...padded.slice(1)].join('\n')}\n\n`;
}

function build(): TurndownService {
  const td = new TurndownService({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
    emDelimiter: '_',
  });
  td.use([strikethrough, taskListItems]);
  // turndown pads bullets to four columns ("-   item"); one space is what people and other tools write.
  td.addRule('listItem', {
    filter: 'li',
    replacement(content, node, options) {
      const body = content.replace(/^\n+/, '').replace(/\n+$/, '\n').replace(/\n/gm, '\n  ');
      const parent = node.parentNode as El | null;
      let prefix = `${options.bulletListMarker} `;
      if (parent?.nodeName === 'OL') {
        const start = Number(parent.getAttribute('start') ?? 1);
        prefix = `${start + Array.prototype.indexOf.call(parent.children, node)}. `;
      }
      return prefix + body + (node.nextSibling && !/\n$/.test(body) ? '\n' : '');
    },
  });
  // Links Readability would have dropped with their list (a table of contents), carried through it as spans.
  td.addRule('keptLink', {
    filter: (node) => node.nodeName === 'SPAN' && node.hasAttribute('data-pier-href'),
    replacement: (content, node) =>
      content.trim() ? `[${content.trim()}](${(node as El).getAttribute('data-pier-href')})` : '',
  });
  td.addRule('preBlock', {
    filter: 'pre',
    replacement: (_content, node) => fenced(preText(node as El), codeLanguage(node as El)),
  });
  td.addRule('tableCell', {
    filter: ['th', 'td'],
    replacement(content, node) {
      const span = Math.min(Number((node as El).getAttribute('colspan') ?? 1) || 1, 50);
      return ` ${cellText(content)} |${' |'.repeat(span - 1)}`;
    },
  });
  td.addRule('tableRow', {
    filter: 'tr',
    replacement: (content) => `\n|${content.replace(/\n/g, ' ')}\n`,
  });
  td.addRule('tableCaption', { filter: 'caption', replacement: (content) => `\n${content.trim()}\n` });
  // turndown tries the rules added last first. A table inside a cell has no GFM form: its rows are flattened into the cell.
  td.addRule('nestedTable', {
    filter: (node) => node.nodeName === 'TABLE',
    replacement: (content) => content.replace(/\|/g, ' ').trim(),
  });
  td.addRule('table', {
    filter: (node) => node.nodeName === 'TABLE' && !node.parentElement?.closest('td, th'),
    replacement: (content) => tableMarkdown(content),
  });
  td.remove(['script', 'style', 'noscript', 'template', 'iframe']);
  return td;
}

const converter = build();

export function htmlToMarkdown(html: string): string {
  return tidy(converter.turndown(html));
}

function tidy(md: string): string {
  return md
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
