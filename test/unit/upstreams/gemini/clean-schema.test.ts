import { describe, expect, it } from 'vitest';
import { cleanSchemaForGemini, RecursiveSchemaError } from '../../../../src/upstreams/gemini/clean-schema.js';

describe('cleanSchemaForGemini', () => {
  it('inlines $refs, turns null unions into nullable, oneOf into anyOf, merges allOf and drops the rest', () => {
    const { schema, removed } = cleanSchemaForGemini({
      $schema: 'http://json-schema.org/draft-07/schema#',
      $defs: { address: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } },
      type: 'object',
      properties: {
        home: { $ref: '#/$defs/address', description: 'Where they live' },
        nickname: { anyOf: [{ type: 'string', maxLength: 20 }, { type: 'null' }] },
        score: { type: 'number', exclusiveMinimum: 0, format: 'double' },
        size: { enum: [1, 2, 3] },
        shape: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
        tags: { type: 'array', items: { type: 'string', format: 'uri' }, uniqueItems: true },
        extra: { allOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { properties: { b: { type: 'string' } }, required: ['b'] }] },
        anything: { type: 'object', properties: {} },
      },
      required: ['home'],
      additionalProperties: false,
    });
    expect(schema).toEqual({
      type: 'object',
      properties: {
        home: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], description: 'Where they live' },
        nickname: { nullable: true, type: 'string', maxLength: 20 },
        score: { type: 'number', format: 'double' },
        size: { type: 'integer', format: 'enum', enum: ['1', '2', '3'] },
        shape: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
        tags: { type: 'array', items: { type: 'string' } },
        extra: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, required: ['b'] },
        anything: { type: 'object' },
      },
      required: ['home'],
    });
    expect(removed).toEqual(['$schema', 'additionalProperties', 'exclusiveMinimum', 'format:uri', 'uniqueItems']);
  });

  it('reports an object without properties as no schema, and throws on recursion', () => {
    expect(cleanSchemaForGemini({ type: 'object', properties: {} }).schema).toBeUndefined();
    expect(cleanSchemaForGemini({ type: 'object' }).schema).toBeUndefined();
    expect(() => cleanSchemaForGemini({ $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } }, $ref: '#/$defs/node' })).toThrow(RecursiveSchemaError);
  });
});
