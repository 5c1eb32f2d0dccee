/**
 * The part of autocannon's programmatic API the benchmark uses (autocannon ships no type declarations).
 * See https://github.com/mcollina/autocannon#api
 */
declare module 'autocannon' {
  namespace autocannon {
    /** A request as autocannon builds it; `setupRequest` may change it. */
    interface RawRequest {
      method?: string
      path?: string
      headers?: Record<string, string>
      body?: string | Buffer
    }

    interface Request extends RawRequest {
      setupRequest?: (request: RawRequest, context: Record<string, unknown>) => RawRequest | undefined
      onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void
    }

    interface Options {
      url: string
      connections?: number
      duration?: number
      amount?: number
      pipelining?: number
      timeout?: number
      requests?: Request[]
      method?: string
      headers?: Record<string, string>
      body?: string
    }

    /** hdr-histogram-percentiles-obj statistics. */
    interface Histogram {
      average: number
      mean: number
      stddev: number
      min: number
      max: number
      total: number
      sent?: number
      p2_5: number
      p50: number
      p75: number
      p90: number
      p97_5: number
      p99: number
      p99_9: number
    }

    interface Result {
      url: string
      requests: Histogram
      latency: Histogram
      throughput: Histogram
      duration: number
      errors: number
      timeouts: number
      mismatches: number
      non2xx: number
      '2xx': number
      statusCodeStats: Record<string, { count: number }>
    }

    interface Instance extends PromiseLike<Result> {
      stop (): void
      /** Each response: its status code, its size and its latency in milliseconds (a fraction, not rounded). */
      on (event: 'response', listener: (client: unknown, statusCode: number, bytes: number, milliseconds: number) => void): this
    }
  }

  function autocannon (options: autocannon.Options): autocannon.Instance

  // A CommonJS module: imported from ESM, the default export is `module.exports`, the function.
  export default autocannon
}
