import { genderSchema } from '../inputs/common.js';
import { enumFromZod } from './zod-input.js';

export const Gender = enumFromZod('Gender', genderSchema);
