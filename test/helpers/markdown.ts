/**
 * The fenced code blocks of a Markdown page, as the documentation tests read them (`code-blocks.test.ts` type-checks
 * the TypeScript ones, `requests.test.ts` runs the requests, `getting-started.test.ts` the guide's SQL and
 * declarations). A fence is three or more backticks or tildes, indented or not, closed by a fence of the same
 * character at least as long; an unclosed fence runs to the end of the page. The lines inside lose the opening
 * fence's indentation.
 */

/** A line of a block, and its line in the page (1-based). */
export interface MarkdownLine {
  readonly text: string
  readonly line: number
}

export interface FencedBlock {
  /** The index (0-based) of its opening fence in the page's lines. */
  readonly start: number
  /** The index of its closing fence (the page's length when it has none). */
  readonly end: number
  /** The info string's first word, lowercase (`ts`, `sh`, `json`; '' for none). */
  readonly lang: string
  readonly lines: readonly MarkdownLine[]
}

/** The fenced blocks of a page given as its lines, in order. */
export function fencedBlocks (source: readonly string[]): FencedBlock[] {
  const blocks: FencedBlock[] = []
  for (let i = 0; i < source.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(source[i])
    if (open === null) continue
    const [, indent, fence, lang] = open
    const lines: MarkdownLine[] = []
    let j = i + 1
    for (; j < source.length; j++) {
      const close = /^\s*(`{3,}|~{3,})\s*$/.exec(source[j])
      if (close !== null && close[1][0] === fence[0] && close[1].length >= fence.length) break
      lines.push({ text: source[j].startsWith(indent) ? source[j].slice(indent.length) : source[j].trimStart(), line: j + 1 })
    }
    blocks.push({ start: i, end: j, lang: lang.toLowerCase(), lines })
    i = j
  }
  return blocks
}

/** The text of a block. */
export function blockText (block: FencedBlock): string {
  return block.lines.map((line) => `${line.text}\n`).join('')
}
