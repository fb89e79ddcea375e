/** The generated module for an OpenAPI document given as JSON text. */
export function openApiTypes(documentText: string): Promise<string>;
