import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { processLines, type ImportKind, type ProcessedBatch, type RowEncoding } from './import-batch.js';
import type { ValidationRequest } from './import-worker.js';

/** Validates batches of lines; results come back in any order, each for its own request. */
export interface Validator {
  /** How many batches it validates at the same time. */
  readonly threads: number;
  /** `text`: whole lines of NDJSON, the first being line `firstLine` of the input. */
  validate(text: string, firstLine: number): Promise<ProcessedBatch>;
  close(): Promise<void>;
}

/** In the importing thread: for the embedded store, whose database runs in this thread anyway. */
export function inThreadValidator(kind: ImportKind, encoding: RowEncoding): Validator {
  return {
    threads: 1,
    validate: async (text, firstLine) => processLines(kind, text, firstLine, encoding),
    close: async () => {},
  };
}

/**
 * Worker threads, one per core, given batches in turn: parsing and validating a line costs more
 * than the database's share of loading it, and the importing thread only streams the results.
 */
export function workerValidator(kind: ImportKind, encoding: RowEncoding, threads = Math.min(4, availableParallelism())): Validator {
  const workers = Array.from({ length: threads }, () => startWorker());
  const waiting = new Map<number, { resolve(batch: ProcessedBatch): void; reject(error: Error): void }>();
  let nextId = 0;
  for (const worker of workers) {
    worker.on('message', (reply: { id: number; batch?: ProcessedBatch; error?: string }) => {
      const request = waiting.get(reply.id)!;
      waiting.delete(reply.id);
      if (reply.batch) request.resolve(reply.batch);
      else request.reject(new Error(`validation failed: ${reply.error}`));
    });
    worker.on('error', (error) => {
      for (const request of waiting.values()) request.reject(error);
      waiting.clear();
    });
  }
  return {
    threads,
    validate(text, firstLine) {
      const id = nextId++;
      const request: ValidationRequest = { id, kind, text, firstLine, encoding };
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        workers[id % workers.length].postMessage(request);
      });
    },
    close: async () => {
      await Promise.all(workers.map((worker) => worker.terminate()));
    },
  };
}

function startWorker(): Worker {
  const module = new URL(import.meta.url.endsWith('.ts') ? './import-worker.ts' : './import-worker.js', import.meta.url);
  // Room for a batch's short-lived objects: a small young generation promotes them and collects
  // them again, which costs as much as validating.
  const options = { resourceLimits: { maxYoungGenerationSizeMb: 96 } };
  if (!module.pathname.endsWith('.ts')) return new Worker(module, options);
  // Sources run through tsx (bin/creator-data.js), whose loader a worker thread does not inherit.
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import { register } from ${JSON.stringify(tsx)}; register(); await import(${JSON.stringify(module.href)});`;
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(bootstrap)}`), options);
}
