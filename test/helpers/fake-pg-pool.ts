/**
 * A stand-in for a `pg` pool whose clients misbehave as pg can: `twice`, a query answered with an error and then again
 * with rows (pg answers a query it could not send, then again when the connection is ready); `throws`, a query that
 * throws while it is sent. Its clients have no protocol connection, so statements go to them as pg's own `Query`
 * would. Each checkout's id (numbered by `checkouts`, which pools may share) is pushed to `releases` when it is given
 * back, by the callback's `release` or by `client.release()`. With `oneClient`, every checkout gets the same client
 * object (as a pool of one connection does); else each gets a new one.
 */
export function fakePgPool (behaviour: 'twice' | 'throws', releases: number[], checkouts = { count: 0 }, oneClient = false): unknown {
  let current = 0
  const release = (): void => { releases.push(current) }
  const newClient = (): unknown => ({
    query (_text: string, _values: unknown[], answer: (error: Error | undefined, result?: unknown) => void) {
      if (behaviour === 'throws') throw new TypeError('cannot serialize a parameter')
      setImmediate(() => {
        answer(new Error('could not send'))
        answer(undefined, { rows: [{ late: true }], command: 'SELECT', rowCount: 1 })
      })
    },
    release,
  })
  const shared = newClient()
  return {
    connect (callback: (error: Error | undefined, client: unknown, release: () => void) => void) {
      current = ++checkouts.count
      callback(undefined, oneClient ? shared : newClient(), release)
    },
    end: async () => {},
  }
}
