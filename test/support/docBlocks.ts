/**
 * The shell command blocks of a Markdown document (```sh fences at the
 * start of a line), in order, with how the walkthrough test treats each.
 * An HTML comment on the line before the fence (blank lines between are
 * allowed) marks a block:
 *
 * - `<!-- not run: <reason> -->`: shown to readers, never run (installing,
 *   the test suite itself);
 * - `<!-- in another terminal -->`: a command that runs until stopped (the
 *   server, the example model files), started in the background.
 *
 * Any other block is run, in order, and must exit 0.
 */
import * as Fs from "node:fs"

export type DocBlockMode =
  | { readonly _tag: "Run" }
  | { readonly _tag: "Background" }
  | { readonly _tag: "NotRun"; readonly reason: string }

export interface DocBlock {
  /** `README.md:42`: where the block's fence opens. */
  readonly where: string
  readonly text: string
  readonly mode: DocBlockMode
}

const NOT_RUN = /^<!--\s*not run:\s*(.+?)\s*-->$/
const BACKGROUND = /^<!--\s*in another terminal\s*-->$/
const OTHER_MARK = /^<!--.*-->$/

const modeOf = (marker: string | undefined, where: string): DocBlockMode => {
  if (marker === undefined) return { _tag: "Run" }
  const notRun = NOT_RUN.exec(marker)
  if (notRun !== null) return { _tag: "NotRun", reason: notRun[1]! }
  if (BACKGROUND.test(marker)) return { _tag: "Background" }
  if (OTHER_MARK.test(marker)) throw new Error(`${where}: unknown mark before a sh block: ${marker}`)
  return { _tag: "Run" }
}

/** The ```sh blocks of `markdown`, named after `file` for messages. */
export const shBlocks = (file: string, markdown: string): ReadonlyArray<DocBlock> => {
  const lines = markdown.split("\n")
  const blocks: Array<DocBlock> = []
  for (let i = 0; i < lines.length; i++) {
    if (!/^```sh\s*$/.test(lines[i]!)) continue
    const where = `${file}:${i + 1}`
    let previous = i - 1
    while (previous >= 0 && lines[previous]!.trim() === "") previous--
    const marker = previous >= 0 ? lines[previous]!.trim() : undefined
    const end = lines.findIndex((line, index) => index > i && /^```\s*$/.test(line))
    if (end === -1) throw new Error(`${where}: the sh block is not closed`)
    blocks.push({ where, text: lines.slice(i + 1, end).join("\n"), mode: modeOf(marker?.startsWith("<!--") ? marker : undefined, where) })
    i = end
  }
  return blocks
}

export const shBlocksOfFile = (root: string, file: string) => shBlocks(file, Fs.readFileSync(`${root}/${file}`, "utf8"))
