// Text matching is case-insensitive by lower-casing both sides. The stored side is lower-cased by
// PostgreSQL's lower() (the SQL path matches `lower(column)`, the index keeps that text), which
// maps one character to one, the Unicode simple mapping. JavaScript's toLowerCase applies the full
// mapping instead: 'İ' becomes 'i' and a combining dot, a word-final 'Σ' becomes 'ς' where lower()
// gives 'σ'; a query lower-cased that way never met a name that holds them.

const ASCII = /^[\x00-\x7f]*$/;

/** `text` lower-cased one character at a time, as PostgreSQL's lower() does. */
export function lowerCase(text: string): string {
  if (ASCII.test(text)) return text.toLowerCase();
  let lowered = '';
  for (const character of text) {
    // The one character whose full lower case is two (SpecialCasing.txt); a character alone is never word-final.
    lowered += character === '\u0130' ? 'i' : character.toLowerCase();
  }
  return lowered;
}
