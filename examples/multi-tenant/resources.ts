/**
 * The resource types of the multi-tenant example: projects, members, labels and tasks, every row owned by one tenant.
 *
 * Each type stores its tenant in a hidden, read-only `tenant_id` column and declares the same two hooks:
 *
 * - `scope` keeps the request to its tenant's rows. The library ANDs it into every statement that reaches the type —
 *   wherever that is: a collection or a detail, an `include` at any depth, a relationship filter or a sort path of
 *   another type, a count, an `UPDATE`/`DELETE`, the existence check of a link target, an `/operations` batch.
 * - `beforeCreate` stamps the tenant on every new row (the client cannot send `tenant_id`: it is read-only).
 *
 * The tenant comes from the request's context (see `app.ts`).
 */
import { Type } from '@sinclair/typebox'
import { defineResourceFor, defineResources } from '../../lib/index.js'

/** The context of a request of this service: the tenant named by the `X-Tenant` header. */
export interface TenantContext {
  readonly tenant: string
}

/** `defineResource` whose hooks receive the tenant context. */
const define = defineResourceFor<TenantContext>()

/** The tenant that owns a row: never rendered, never written by a client. */
const tenantId = () => ({ schema: Type.String(), hidden: true, readOnly: true }) as const

// A project: its tasks point at it (`tasks.project_id`).
export const project = define({
  type: 'project',
  path: '/projects',
  table: 'projects',
  attributes: {
    tenant_id: tenantId(),
    name: { schema: Type.String(), required: true },
  },
  relationships: {
    tasks: { kind: 'to-many', type: 'task', inverse: 'project' },
  },
  hooks: {
    scope: (context, where) => where.eq('tenant_id', context.tenant),
    beforeCreate (input, { context }) {
      input.attributes.tenant_id = context.tenant
    },
  },
})

// A member of the tenant's team: the tasks assigned to them (`tasks.assignee_id`).
export const member = define({
  type: 'member',
  path: '/members',
  table: 'members',
  attributes: {
    tenant_id: tenantId(),
    name: { schema: Type.String(), required: true },
  },
  relationships: {
    tasks: { kind: 'to-many', type: 'task', inverse: 'assignee' },
  },
  hooks: {
    scope: (context, where) => where.eq('tenant_id', context.tenant),
    beforeCreate (input, { context }) {
      input.attributes.tenant_id = context.tenant
    },
  },
})

// A label: the tasks it is put on, through the join table `task_labels`.
export const label = define({
  type: 'label',
  path: '/labels',
  table: 'labels',
  attributes: {
    tenant_id: tenantId(),
    name: { schema: Type.String(), required: true },
  },
  relationships: {
    tasks: { kind: 'to-many', type: 'task', through: { table: 'task_labels', sourceKey: 'label_id', targetKey: 'task_id' } },
  },
  hooks: {
    scope: (context, where) => where.eq('tenant_id', context.tenant),
    beforeCreate (input, { context }) {
      input.attributes.tenant_id = context.tenant
    },
  },
})

// A task: in a project (optional), assigned to a member (optional), with labels.
export const task = define({
  type: 'task',
  path: '/tasks',
  table: 'tasks',
  attributes: {
    tenant_id: tenantId(),
    title: { schema: Type.String(), required: true },
  },
  relationships: {
    project: { kind: 'to-one', type: 'project', foreignKey: 'project_id' },
    assignee: { kind: 'to-one', type: 'member', foreignKey: 'assignee_id' },
    labels: { kind: 'to-many', type: 'label', through: { table: 'task_labels', sourceKey: 'task_id', targetKey: 'label_id' } },
  },
  hooks: {
    scope: (context, where) => where.eq('tenant_id', context.tenant),
    beforeCreate (input, { context }) {
      input.attributes.tenant_id = context.tenant
    },
  },
})

/** Every resource type of the multi-tenant example, in the order they are registered. */
export const resources = defineResources([project, member, label, task])
