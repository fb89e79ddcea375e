import { useAPQ } from '@graphql-yoga/plugin-apq';
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { ScopeContext } from './scope.js';

// Automatic Persisted Queries (Apollo's protocol, yoga's plugin): a client sends
// `extensions.persistedQuery = { version: 1, sha256Hash }` alone (POST, or GET with the extensions
// in the query string); an unknown hash answers PersistedQueryNotFound, the client sends the text
// once with its hash, and from then on the hash alone runs it. Documents are kept in this process
// only: behind several instances a client may be asked for the text once per instance.

/** Documents kept, and their characters in all: a client cannot make the store grow past these. */
export const PERSISTED_MAX_DOCUMENTS = 1_000;
export const PERSISTED_MAX_CHARS = 8_000_000;

/** Least recently used documents leave first (a Map iterates in insertion order: oldest first). */
export class PersistedDocuments {
  readonly #documents = new Map<string, string>();
  #chars = 0;

  get(hash: string): string | null {
    const document = this.#documents.get(hash);
    if (document === undefined) return null;
    this.#documents.delete(hash);
    this.#documents.set(hash, document);
    return document;
  }

  set(hash: string, document: string): void {
    this.#remove(hash);
    this.#documents.set(hash, document);
    this.#chars += document.length;
    for (const [oldest] of this.#documents) {
      if (this.#documents.size <= PERSISTED_MAX_DOCUMENTS && this.#chars <= PERSISTED_MAX_CHARS) break;
      this.#remove(oldest);
    }
  }

  #remove(hash: string): void {
    const document = this.#documents.get(hash);
    if (document === undefined) return;
    this.#documents.delete(hash);
    this.#chars -= document.length;
  }
}

/**
 * yoga's APQ plugin with our error codes (docs/contract/decisions.md §6: a closed set): an unknown
 * hash is NOT_FOUND (404), a hash that does not match its text BAD_REQUEST (400). The messages stay
 * the protocol's (`PersistedQueryNotFound`), which is what Apollo, urql and Relay clients look for.
 * A text is kept only once its request's key was accepted: requests without a valid key could
 * otherwise push every paying client's documents out of the store.
 */
export function usePersistedOperations(store = new PersistedDocuments()): Plugin<{}, ScopeContext> {
  const apq = useAPQ({ store: { get: (hash: string) => store.get(hash), set: () => {} } });
  const offered = new WeakMap<Request, { hash: string; text: string }>();
  return {
    async onParams(payload) {
      try {
        await apq.onParams!(payload as unknown as Parameters<NonNullable<typeof apq.onParams>>[0]);
      } catch (error) {
        const code = error instanceof GraphQLError ? error.extensions?.code : undefined;
        if (code === 'PERSISTED_QUERY_NOT_FOUND') throw persistedError('PersistedQueryNotFound', 'NOT_FOUND', 404);
        if (code === 'PERSISTED_QUERY_MISMATCH') throw persistedError('PersistedQueryMismatch', 'BAD_REQUEST', 400);
        throw error;
      }
      // A text with its hash (the plugin checked that they match): kept if the key is accepted.
      const { query, extensions } = payload.params;
      const hash = (extensions?.persistedQuery as { sha256Hash?: unknown } | undefined)?.sha256Hash;
      if (typeof query === 'string' && typeof hash === 'string') offered.set(payload.request, { hash, text: query });
    },
    onResultProcess({ request, serverContext }) {
      const document = offered.get(request);
      if (document && serverContext.scope?.access.caller) store.set(document.hash, document.text);
    },
  };
}

const persistedError = (message: string, code: string, status: number) => new GraphQLError(message, { extensions: { code, http: { status } } });
