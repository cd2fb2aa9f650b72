// The fenced code blocks of the Markdown documents the host tests read
// (docs/hosts.md, README.md). No dependencies: hosts.test.mjs runs without
// npm install.

/**
 * The fenced code blocks of a Markdown text: { lang, section, line, text },
 * section being the `## ` heading above the block and line its opening
 * fence's line number (from 1).
 */
export function codeBlocks(markdown) {
  const blocks = [];
  let section = '';
  let open = null;
  markdown.split('\n').forEach((line, i) => {
    if (open) {
      if (line.startsWith('```')) {
        blocks.push(open);
        open = null;
      } else {
        open.text += `${line}\n`;
      }
    } else if (line.startsWith('## ')) {
      section = line.slice(3).trim();
    } else if (line.startsWith('```')) {
      open = { lang: line.slice(3).trim(), section, line: i + 1, text: '' };
    }
  });
  return blocks;
}
