import { jsonApi } from './plugin.js'

export { jsonApi, JsonApiOptionsError } from './plugin.js'
export type { JsonApiOptions, PaginationOptions } from './options.js'
export { defineResource } from './schema/declaration.js'
export type {
  AttributeDeclaration,
  ClientIdPolicy,
  DerivedAttribute,
  IdKind,
  InverseDeclaration,
  ManyToManyDeclaration,
  RelationshipDeclaration,
  ResourceDeclaration,
  RouteSelection,
  Row,
  ToOneForeignKeyDeclaration,
} from './schema/declaration.js'
export { ResourceConfigError } from './schema/resolve-resources.js'
export { JsonApiError } from './errors/json-api-error.js'
export type { ErrorObject, ErrorSource, JsonApiErrorInit } from './errors/json-api-error.js'
export { ERROR_CODES } from './errors/error-codes.js'
export type { ErrorCode } from './errors/error-codes.js'
export type { ColumnValues, FindManyQuery, RelatedRow, Repository, StorageErrorKind } from './repository/repository.js'
export { StorageError } from './repository/repository.js'
export { KyselyRepository } from './repository/kysely/kysely-repository.js'
export type { ResolvedAttribute, ResolvedRelationship, ResolvedResource, RelationshipStorage } from './schema/resolved.js'
export type { SortNode } from './query/query-tree.js'
export { createEmbeddedDatabase } from './database/embedded-database.js'
export type { EmbeddedDatabase, EmbeddedDatabaseOptions } from './database/embedded-database.js'

export default jsonApi
