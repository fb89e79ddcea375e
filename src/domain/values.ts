// Values with one meaning across the service: a gender is stored as a code (0 unknown, 1 male,
// 2 female: the REST body's own numbers) and shown as a name.

export const genders = ['UNKNOWN', 'MALE', 'FEMALE'] as const;
export type Gender = (typeof genders)[number];

export const genderFromCode = (code: number): Gender => genders[code] ?? 'UNKNOWN';

export const genderToCode = (gender: Gender): number => genders.indexOf(gender);
