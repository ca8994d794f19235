/**
 * One XML part of a 3MF archive, read as it inflates (zip.ts): a streaming
 * SAX parser (saxes: a state machine, linear in the input, no regular
 * expressions over the document), fed chunk by chunk, each element handed
 * on with the namespace it is in.
 *
 * saxes runs without its own namespace handling (which builds an object per
 * attribute); the declarations (`xmlns`, `xmlns:p`) are tracked here, a
 * scope per element that declares any, so an element's namespace is a
 * lookup of its prefix. What the 3MF core specification (2.3.2) requires of
 * the XML is held here: UTF-8 (an XML declaration naming another encoding
 * is refused), no DTD (refused: DTDs are the entity-expansion attack), and
 * no token (a comment, an attribute, a tag) longer than MAX_TOKEN
 * characters, since the parser accumulates them whole.
 */
import { SaxesParser, type SaxesTagPlain } from "saxes"
import { ModelError } from "./mesh.ts"
import { streamEntry, type UnpackBudget, type ZipEntry } from "./zip.ts"

/** The longest run of characters without a tag starting or ending (a comment, an attribute value, a tag). */
export const MAX_TOKEN = 16 * 1024 * 1024
const WRITE_SLICE = 1024 * 1024
const XML_NAMESPACE = "http://www.w3.org/XML/1998/namespace"

/** Namespace URIs by prefix ("" the default namespace), as declared where an element is. */
type Scope = Readonly<Record<string, string | undefined>>

/** An element as the part's reader sees it: its local name, its namespace, its attributes (entities decoded). */
export interface Element {
  readonly name: string
  /** The namespace URI, undefined when the element is in none. */
  readonly namespace: string | undefined
  readonly attributes: Readonly<Record<string, string>>
  readonly scope: Scope
}

/** The name without its prefix. */
export const localName = (name: string) => name.slice(name.indexOf(":") + 1)

/** The namespace of a prefixed name (`p:path`) or of an element's unprefixed name; undefined for an undeclared prefix. */
export const namespaceOf = (scope: Scope, name: string): string | undefined => {
  const colon = name.indexOf(":")
  return scope[colon < 0 ? "" : name.slice(0, colon)]
}

/**
 * An attribute of `element` by local name: the unprefixed one (the
 * element's own), else one whose prefix is in `namespace`. An attribute of
 * another namespace with the same local name is not it: a consumer ignores
 * the namespaces it does not support (3MF core specification 2.3.3.1).
 */
export const attribute = (element: Element, name: string, namespace: string | undefined): string | undefined => {
  const attributes = element.attributes
  const plain = attributes[name]
  if (plain !== undefined) return plain
  let found: string | undefined
  for (const key in attributes) {
    if (key.length > name.length && key.endsWith(name) && localName(key) === name && namespaceOf(element.scope, key) === namespace) {
      found = attributes[key]
    }
  }
  return found
}

/** A namespaced attribute only (`p:path`): never the unprefixed one, which is the element's own namespace's. */
export const prefixedAttribute = (element: Element, name: string, namespace: string): string | undefined => {
  const attributes = element.attributes
  for (const key in attributes) {
    if (key.length > name.length && key.endsWith(name) && localName(key) === name && namespaceOf(element.scope, key) === namespace) {
      return attributes[key]
    }
  }
  return undefined
}

/** Whether an attribute name declares a namespace: `xmlns` or `xmlns:p`. */
const isDeclaration = (name: string) =>
  // "x" is 120: most attributes (y, z, v1 …) are settled by their first character.
  name.charCodeAt(0) === 120 && name.startsWith("xmlns") && (name.length === 5 || name.charCodeAt(5) === 58)

/** The scope inside an element that declares namespaces: its parent's, with the element's declarations over it. */
const declaredScope = (parent: Scope, attributes: Readonly<Record<string, string>>): Scope => {
  const declared: Record<string, string | undefined> = { ...parent }
  for (const key in attributes) {
    if (isDeclaration(key)) declared[key.length === 5 ? "" : key.slice(6)] = attributes[key] === "" ? undefined : attributes[key]
  }
  return declared
}

/**
 * Reads the XML of one ZIP entry, streamed: `onOpen` gets every element
 * (with its namespace), `onClose` its end (a self-closing one both). A
 * malformed document, a DTD or another encoding than UTF-8 is a ModelError
 * naming the part.
 */
export const readXml = (
  bytes: Uint8Array,
  entry: ZipEntry,
  budget: UnpackBudget,
  onOpen: (element: Element) => void,
  onClose: (name: string) => void
): void => {
  const parser = new SaxesParser<{ xmlns: false; position: false }>({ xmlns: false, position: false })
  const decoder = new TextDecoder()
  const scopes: Array<Scope> = [{ xml: XML_NAMESPACE }]
  // Characters written so far, and the length of the chunk being written (where an error is, about).
  let fed = 0
  let writing = 0
  let lastEvent = 0
  let sawEvent = false
  parser.on("error", (error) => {
    const where = writing === 0 ? "at its end" : `within characters ${fed + 1}–${fed + writing}`
    throw new ModelError({ reason: `3MF ${entry.name} is not well-formed XML (${where}): ${error.message}` })
  })
  parser.on("xmldecl", (declaration) => {
    const encoding = declaration.encoding
    if (encoding !== undefined && encoding.toLowerCase().replace("-", "") !== "utf8") {
      throw new ModelError({
        reason: `3MF ${entry.name} declares the encoding ${encoding}: the 3MF core specification (2.3.2) requires UTF-8`
      })
    }
  })
  parser.on("doctype", () => {
    throw new ModelError({ reason: `3MF ${entry.name} has a DTD (<!DOCTYPE …>): the 3MF core specification (2.3.2) forbids DTDs` })
  })
  // Whether the tag being read declares a namespace: told by its attributes as they are read, so a tag without one is not searched.
  let declares = false
  parser.on("attribute", (attribute) => {
    if (isDeclaration(attribute.name)) declares = true
  })
  parser.on("opentag", (tag: SaxesTagPlain) => {
    sawEvent = true
    const parent = scopes[scopes.length - 1]!
    const scope = declares ? declaredScope(parent, tag.attributes) : parent
    declares = false
    scopes.push(scope)
    onOpen({ name: localName(tag.name), namespace: namespaceOf(scope, tag.name), attributes: tag.attributes, scope })
  })
  parser.on("closetag", (tag) => {
    sawEvent = true
    scopes.pop()
    onClose(localName(tag.name))
  })
  // In slices of at most WRITE_SLICE characters (an inflated chunk can be megabytes), so the run without an event is measured closely.
  const write = (text: string) => {
    for (let at = 0; at < text.length; at += WRITE_SLICE) {
      const slice = at === 0 && text.length <= WRITE_SLICE ? text : text.slice(at, at + WRITE_SLICE)
      writing = slice.length
      parser.write(slice)
      fed += slice.length
      if (sawEvent) {
        lastEvent = fed
        sawEvent = false
      } else if (fed - lastEvent > MAX_TOKEN) {
        throw new ModelError({
          reason: `3MF ${entry.name}: more than ${MAX_TOKEN} characters without a tag (a comment, text or attribute that long is not a model)`
        })
      }
    }
  }
  streamEntry(bytes, entry, budget, (chunk) => write(decoder.decode(chunk, { stream: true })))
  write(decoder.decode())
  writing = 0
  parser.close()
}
