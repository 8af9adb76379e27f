/**
 * The repository's extract of the reference document (test/fixtures/reference/) against its source:
 * it must be what scripts/extract-reference.ts makes of ../shared/reference/openapi-subset.json today,
 * so the copy the contract tests read cannot drift from the reference unnoticed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  extractReference,
  formatExtract,
  type Json,
  REFERENCE_EXTRACT,
  REFERENCE_SOURCE,
} from '../../scripts/extract-reference.ts';

describe('reference extract', () => {
  it('equals a fresh extraction of ../shared/reference/openapi-subset.json (skipped when the clone has no ../shared)', (ctx) => {
    if (!existsSync(REFERENCE_SOURCE)) {
      ctx.skip(`${REFERENCE_SOURCE} is not beside this clone, so there is nothing to compare the extract with`);
    }
    const fresh = formatExtract(extractReference(JSON.parse(readFileSync(REFERENCE_SOURCE, 'utf8')) as Json));
    // Compared as text: the file must be byte for byte what `node scripts/extract-reference.ts` writes.
    expect(
      readFileSync(REFERENCE_EXTRACT, 'utf8') === fresh,
      'the extract is stale: run node scripts/extract-reference.ts',
    ).toBe(true);
  });

  it('drops prose keywords and keeps names, types, enums and defaults, even a property called description', () => {
    const doc: Json = {
      info: { title: 'Reference', version: 'v1', description: 'About the API.' },
      paths: {
        '/v1/things': {
          get: {
            summary: 'List things',
            description: 'Lists things.',
            parameters: [
              {
                name: 'limit',
                in: 'query',
                description: 'How many.',
                schema: { type: 'integer', default: 10, maximum: 100 },
              },
            ],
            responses: {
              '200': {
                description: 'OK',
                content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' }, example: { id: 1 } } },
              },
            },
          },
        },
      },
      components: {
        schemas: {
          Thing: {
            type: 'object',
            description: 'A thing.',
            required: ['description'],
            properties: {
              description: { type: 'string', description: 'What the thing is.', example: 'a lamp', nullable: true },
              kind: { type: 'string', enum: ['A', 'B'], default: 'A', 'x-format': { guid: {} } },
            },
          },
        },
      },
    };
    expect(extractReference(doc)).toEqual({
      info: { title: 'Reference', version: 'v1' },
      paths: {
        '/v1/things': {
          get: {
            parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer', default: 10, maximum: 100 } }],
            responses: {
              '200': { content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } },
            },
          },
        },
      },
      components: {
        schemas: {
          Thing: {
            type: 'object',
            required: ['description'],
            properties: {
              description: { type: 'string', nullable: true },
              kind: { type: 'string', enum: ['A', 'B'], default: 'A', 'x-format': { guid: {} } },
            },
          },
        },
      },
    });
  });
});
