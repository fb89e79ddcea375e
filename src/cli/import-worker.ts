import { parentPort } from 'node:worker_threads';
import { processLines, type ImportKind, type RowEncoding } from './import-batch.js';

// A validation thread of `import` (import-validators.ts): batches of lines in, validated rows out.

export interface ValidationRequest {
  id: number;
  kind: ImportKind;
  text: string;
  firstLine: number;
  encoding: RowEncoding;
}

parentPort!.on('message', ({ id, kind, text, firstLine, encoding }: ValidationRequest) => {
  try {
    parentPort!.postMessage({ id, batch: processLines(kind, text, firstLine, encoding) });
  } catch (error) {
    parentPort!.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
