// Expected documents of the example app, as the library writes them.

export const PATHS: Record<string, string> = {
  user: '/users',
  computer: '/computers',
  user_bio: '/user-bio',
  post: '/posts',
  workplace: '/workplaces',
  group: '/groups',
  parent: '/parents',
  child: '/children',
  'parent-to-child-association': '/parent-to-child-association',
  note: '/notes',
}

export const RELATIONSHIPS: Record<string, string[]> = {
  user: ['computers', 'group', 'bio', 'posts', 'workplace', 'notes'],
  computer: ['owner', 'user'],
  user_bio: ['user'],
  post: ['user'],
  workplace: ['user'],
  group: ['users'],
  parent: ['children', 'kids'],
  child: ['parents', 'guardians'],
  'parent-to-child-association': ['parent', 'child'],
  note: ['owner'],
}

/**
 * A resource object as the library writes it: its links and every relationship's links, with `data` when given — of
 * a to-many (an array) with `meta.count`, the whole of an included relationship that fits in its page.
 */
export function resource (type: string, id: string, attributes: Record<string, unknown>, linkage: Record<string, unknown> = {}): Record<string, unknown> {
  const self = `${PATHS[type]}/${id}`
  return {
    type,
    id,
    attributes,
    links: { self },
    relationships: Object.fromEntries(RELATIONSHIPS[type].map((name) => [name, {
      links: { self: `${self}/relationships/${name}`, related: `${self}/${name}` },
      ...(name in linkage ? { data: linkage[name] } : {}),
      ...(Array.isArray(linkage[name]) ? { meta: { count: linkage[name].length } } : {}),
    }])),
  }
}

export const JSONAPI = { version: '1.0' }
