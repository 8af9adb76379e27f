/**
 * The assertion engine on its own: every source and comparison (table-driven), error cases, and a
 * property test that it never throws whatever it is fed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AssertableResponse, evaluateAssertions } from '../../src/agent/checks/api/assertions.ts';
import {
  ASSERTION_COMPARISONS,
  ASSERTION_SOURCES,
  type Assertion,
  type AssertionComparison,
  type AssertionSource,
} from '../../src/shared/checks/types.ts';

const jsonBody = JSON.stringify({
  data: [
    { id: 7, name: 'first', tags: ['x', 'y'] },
    { id: 8, name: 'second', tags: [] },
  ],
  count: 2,
  price: '19.90',
  empty: '',
  emptyList: [],
  emptyObj: {},
  nothing: null,
  flag: true,
  meta: { version: '1.2.3', build: 42 },
});

const response: AssertableResponse = {
  status: 201,
  headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req-12345', 'x-empty': '' },
  body: jsonBody,
  responseTime: 123.4,
};

const textResponse: AssertableResponse = {
  ...response,
  body: 'Hello, Outpost! build 42 ok',
  headers: { 'content-type': 'text/plain' },
};

type Row = [AssertionSource, string, AssertionComparison, string, boolean, string?];

/** [source, property, comparison, target, expected passed, regex] */
const rows: Row[] = [
  // STATUS_CODE
  ['STATUS_CODE', '', 'EQUALS', '201', true],
  ['STATUS_CODE', '', 'EQUALS', '200', false],
  ['STATUS_CODE', '', 'NOT_EQUALS', '200', true],
  ['STATUS_CODE', '', 'GREATER_THAN', '199', true],
  ['STATUS_CODE', '', 'GREATER_THAN', '201', false],
  ['STATUS_CODE', '', 'LESS_THAN', '300', true],
  ['STATUS_CODE', '', 'CONTAINS', '20', true],
  ['STATUS_CODE', '', 'NOT_CONTAINS', '5', true],
  ['STATUS_CODE', '', 'NOT_EMPTY', '', true],
  ['STATUS_CODE', '', 'IS_EMPTY', '', false],
  ['STATUS_CODE', '', 'NOT_NULL', '', true],
  ['STATUS_CODE', '', 'IS_NULL', '', false],
  // RESPONSE_TIME
  ['RESPONSE_TIME', '', 'LESS_THAN', '500', true],
  ['RESPONSE_TIME', '', 'LESS_THAN', '100', false],
  ['RESPONSE_TIME', '', 'GREATER_THAN', '100', true],
  ['RESPONSE_TIME', '', 'EQUALS', '123.4', true],
  // JSON_BODY
  ['JSON_BODY', '$.data[0].id', 'EQUALS', '7', true],
  ['JSON_BODY', '$.data[0].id', 'EQUALS', '7.0', true],
  ['JSON_BODY', '$.data[0].name', 'EQUALS', 'first', true],
  ['JSON_BODY', '$.data[0].name', 'NOT_EQUALS', 'second', true],
  ['JSON_BODY', 'data[1].name', 'EQUALS', 'second', true],
  ['JSON_BODY', '$.price', 'GREATER_THAN', '19.5', true],
  ['JSON_BODY', '$.price', 'LESS_THAN', '19.5', false],
  ['JSON_BODY', '$.count', 'GREATER_THAN', '1', true],
  ['JSON_BODY', '$.meta', 'HAS_KEY', 'version', true],
  ['JSON_BODY', '$.meta', 'HAS_KEY', 'nope', false],
  ['JSON_BODY', '$.meta', 'NOT_HAS_KEY', 'nope', true],
  ['JSON_BODY', '$', 'HAS_KEY', 'data', true],
  ['JSON_BODY', '', 'NOT_HAS_KEY', 'errors', true],
  ['JSON_BODY', '$.data[0].tags', 'HAS_VALUE', 'y', true],
  ['JSON_BODY', '$.data[0].tags', 'NOT_HAS_VALUE', 'z', true],
  ['JSON_BODY', '$.meta', 'HAS_VALUE', '42', true],
  ['JSON_BODY', '$.data[*].id', 'HAS_VALUE', '8', true],
  ['JSON_BODY', '$.data[*].id', 'EQUALS', '[7,8]', true],
  ['JSON_BODY', '$.data[0]', 'EQUALS', '{"name":"first","id":7,"tags":["x","y"]}', true],
  ['JSON_BODY', '$.empty', 'IS_EMPTY', '', true],
  ['JSON_BODY', '$.emptyList', 'IS_EMPTY', '', true],
  ['JSON_BODY', '$.emptyObj', 'IS_EMPTY', '', true],
  ['JSON_BODY', '$.nothing', 'IS_EMPTY', '', true],
  ['JSON_BODY', '$.missing', 'IS_EMPTY', '', true],
  ['JSON_BODY', '$.data', 'NOT_EMPTY', '', true],
  ['JSON_BODY', '$.data[1].tags', 'NOT_EMPTY', '', false],
  ['JSON_BODY', '$.nothing', 'IS_NULL', '', true],
  ['JSON_BODY', '$.nothing', 'EQUALS', 'null', true],
  ['JSON_BODY', '$.missing', 'IS_NULL', '', true],
  ['JSON_BODY', '$.count', 'NOT_NULL', '', true],
  ['JSON_BODY', '$.flag', 'EQUALS', 'true', true],
  ['JSON_BODY', '$.meta.version', 'CONTAINS', '.2.', true],
  ['JSON_BODY', '$.meta.version', 'NOT_CONTAINS', 'beta', true],
  ['JSON_BODY', '$.data[0].tags', 'CONTAINS', 'x', true],
  ['JSON_BODY', '$.data[?(@.id > 7)].name', 'EQUALS', 'second', true],
  ['JSON_BODY', '$.meta.version', 'EQUALS', '2', true, '^\\d+\\.(\\d+)'],
  ['JSON_BODY', '$.missing', 'EQUALS', '', false],
  // HEADERS
  ['HEADERS', 'Content-Type', 'CONTAINS', 'application/json', true],
  ['HEADERS', 'content-type', 'NOT_CONTAINS', 'xml', true],
  ['HEADERS', 'X-Request-Id', 'EQUALS', 'req-12345', true],
  ['HEADERS', 'x-request-id', 'EQUALS', '12345', true, 'req-(\\d+)'],
  ['HEADERS', 'x-request-id', 'EQUALS', 'req-1', true, 'req-\\d'],
  ['HEADERS', 'x-request-id', 'GREATER_THAN', '12000', true, '(\\d+)$'],
  ['HEADERS', 'x-request-id', 'HAS_KEY', '', true],
  ['HEADERS', '', 'HAS_KEY', 'X-Request-ID', true],
  ['HEADERS', '', 'NOT_HAS_KEY', 'x-powered-by', true],
  ['HEADERS', '', 'HAS_VALUE', 'req-12345', true],
  ['HEADERS', '', 'NOT_HAS_VALUE', 'nope', true],
  ['HEADERS', 'x-missing', 'IS_NULL', '', true],
  ['HEADERS', 'x-missing', 'IS_EMPTY', '', true],
  ['HEADERS', 'x-empty', 'IS_EMPTY', '', true],
  ['HEADERS', 'x-request-id', 'NOT_NULL', '', true],
  ['HEADERS', 'x-request-id', 'NOT_EMPTY', '', true],
  ['HEADERS', 'x-missing', 'EQUALS', 'x', false],
  ['HEADERS', 'x-missing', 'NOT_EQUALS', 'x', true],
  // TEXT_BODY (on a JSON response: the raw text)
  ['TEXT_BODY', '', 'CONTAINS', '"name":"second"', true],
  ['TEXT_BODY', '', 'NOT_CONTAINS', 'error', true],
  ['TEXT_BODY', '', 'NOT_EMPTY', '', true],
  ['TEXT_BODY', '', 'EQUALS', jsonBody, true],
  ['TEXT_BODY', '', 'EQUALS', '1.2.3', true, '"version":"([^"]+)"'],
  ['TEXT_BODY', '', 'IS_NULL', '', true, 'no such text'],
];

function assertion(
  source: AssertionSource,
  property: string,
  comparison: AssertionComparison,
  target: string,
  regex?: string,
): Assertion {
  return { source, property, comparison, target, regex: regex ?? null };
}

describe('evaluateAssertions: every source and comparison', () => {
  it.each(rows)('%s %s %s %s → %s', (source, property, comparison, target, passed, regex) => {
    const [r] = evaluateAssertions([assertion(source, property, comparison, target, regex)], response);
    expect(r?.error).toBeUndefined();
    expect(r?.passed).toBe(passed);
  });

  it('covers all 5 sources and all 14 comparisons', () => {
    expect(new Set(rows.map((r) => r[0]))).toEqual(new Set(ASSERTION_SOURCES));
    expect(new Set(rows.map((r) => r[2]))).toEqual(new Set(ASSERTION_COMPARISONS));
  });

  it('results carry the assertion, actual and passed, in order', () => {
    const list = [
      assertion('STATUS_CODE', '', 'EQUALS', '201'),
      assertion('JSON_BODY', '$.data[0].name', 'EQUALS', 'x'),
    ];
    expect(evaluateAssertions(list, response)).toEqual([
      { ...list[0], actual: 201, passed: true },
      { ...list[1], actual: 'first', passed: false },
    ]);
  });

  it('TEXT_BODY on a text response', () => {
    const [r] = evaluateAssertions([assertion('TEXT_BODY', '', 'EQUALS', '42', '(\\d+)')], textResponse);
    expect(r).toMatchObject({ actual: '42', passed: true });
  });

  it('not found is reported as actual null', () => {
    const [r] = evaluateAssertions([assertion('JSON_BODY', '$.missing', 'EQUALS', 'x')], response);
    expect(r).toMatchObject({ actual: null, passed: false });
  });
});

describe('evaluateAssertions: property and regex per source, as the reference reads them', () => {
  const html: AssertableResponse = {
    ...textResponse,
    body: '<!doctype html><html lang="en"><body>The quick brown fox</body></html>',
  };
  const cases: Array<[string, Assertion, AssertableResponse, unknown, boolean]> = [
    // The reference's CLI (textBody(property)) puts the regular expression in property.
    [
      'TEXT_BODY: property is a regex, its first capture group is the value',
      assertion('TEXT_BODY', '<!doctype (.{4})', 'EQUALS', 'html'),
      html,
      'html',
      true,
    ],
    [
      'TEXT_BODY: property as /regex/flags',
      assertion('TEXT_BODY', '/LANG="(.{2})"/i', 'EQUALS', 'en'),
      html,
      'en',
      true,
    ],
    [
      'TEXT_BODY: property without a capture group gives the whole match',
      assertion('TEXT_BODY', 'quick \\w+ fox', 'EQUALS', 'quick brown fox'),
      html,
      'quick brown fox',
      true,
    ],
    [
      'TEXT_BODY: property that does not match gives nothing',
      assertion('TEXT_BODY', '<!doctype (xml)', 'IS_NULL', ''),
      html,
      null,
      true,
    ],
    [
      'TEXT_BODY: property then regex narrows what property picked',
      assertion('TEXT_BODY', 'quick (\\w+ \\w+)', 'EQUALS', 'fox', ' (\\w+)$'),
      html,
      'fox',
      true,
    ],
    [
      'TEXT_BODY: empty property with regex (older clients) still works',
      assertion('TEXT_BODY', '', 'EQUALS', 'brown', 'quick (\\w+)'),
      html,
      'brown',
      true,
    ],
    // HEADERS: the header name in property, the regex on its value (the CLI's headers(name, regex)).
    [
      'HEADERS: property names the header, regex picks from its value',
      assertion('HEADERS', 'Content-Type', 'EQUALS', 'plain', 'text/(\\w+)'),
      textResponse,
      'plain',
      true,
    ],
    // STATUS_CODE and RESPONSE_TIME take neither (the reference's numeric builders send '' and null).
    [
      'STATUS_CODE: property and regex are not used',
      assertion('STATUS_CODE', 'ignored', 'EQUALS', '201', '(\\d)'),
      response,
      201,
      true,
    ],
    [
      'RESPONSE_TIME: property and regex are not used',
      assertion('RESPONSE_TIME', 'ignored', 'EQUALS', '123.4', '(\\d)'),
      response,
      123.4,
      true,
    ],
  ];
  it.each(cases)('%s', (_, a, res, actual, passed) => {
    const [r] = evaluateAssertions([a], res);
    expect(r?.error).toBeUndefined();
    expect(r).toMatchObject({ actual, passed });
  });

  it('an invalid regex in property fails the assertion, naming the field', () => {
    const [r] = evaluateAssertions([assertion('TEXT_BODY', '<!doctype (', 'EQUALS', 'html')], textResponse);
    expect(r).toMatchObject({
      passed: false,
      error: expect.stringMatching(/^property: invalid regular expression "<!doctype \(":/),
    });
  });
});

describe('evaluateAssertions: what cannot be evaluated fails with an error', () => {
  const cases: Array<[string, Assertion, AssertableResponse, RegExp]> = [
    [
      'JSON_BODY on a non-JSON body',
      assertion('JSON_BODY', '$.a', 'EQUALS', '1'),
      textResponse,
      /^the response body is not valid JSON/,
    ],
    [
      'an invalid regex',
      assertion('TEXT_BODY', '', 'EQUALS', '1', '(unclosed'),
      response,
      /^regex: invalid regular expression "\(unclosed"/,
    ],
    [
      'an invalid JSONPath filter',
      assertion('JSON_BODY', '$.data[?(process.exit())]', 'EQUALS', '1'),
      response,
      /^invalid JSON path/,
    ],
    ['GREATER_THAN on text', assertion('JSON_BODY', '$.data[0].name', 'GREATER_THAN', '1'), response, /needs a number/],
    [
      'GREATER_THAN with a non-numeric target',
      assertion('STATUS_CODE', '', 'GREATER_THAN', 'abc'),
      response,
      /numeric target/,
    ],
    [
      'HAS_KEY on an array',
      assertion('JSON_BODY', '$.data', 'HAS_KEY', 'id'),
      response,
      /needs an object, the value is an array/,
    ],
    [
      'HAS_VALUE on a string',
      assertion('JSON_BODY', '$.price', 'HAS_VALUE', '19.90'),
      response,
      /needs an array or object/,
    ],
    [
      'LESS_THAN when the regex did not match',
      assertion('HEADERS', 'x-request-id', 'LESS_THAN', '1', 'nomatch(\\d+)'),
      response,
      /needs a number, the value is nothing/,
    ],
    ['NOT_HAS_KEY on nothing', assertion('JSON_BODY', '$.missing', 'NOT_HAS_KEY', 'a'), response, /not found/],
  ];
  it.each(cases)('%s', (_name, a, res, message) => {
    const [r] = evaluateAssertions([a], res);
    expect(r?.passed).toBe(false);
    expect(r?.error).toMatch(message);
  });

  it('one bad assertion does not affect the others', () => {
    const results = evaluateAssertions(
      [assertion('JSON_BODY', '$.a', 'EQUALS', '1'), assertion('STATUS_CODE', '', 'EQUALS', '201')],
      textResponse,
    );
    expect(results.map((r) => r.passed)).toEqual([false, true]);
  });

  it('a malformed assertion object (unknown source/comparison) fails, does not throw', () => {
    const weird = [
      { source: 'COOKIES', comparison: 'EQUALS', property: '', target: '' },
      { source: 'STATUS_CODE', comparison: 'MATCHES', property: '', target: '' },
      { source: 'JSON_BODY', comparison: 'EQUALS', property: null, target: null },
    ] as unknown as Assertion[];
    const results = evaluateAssertions(weird, response);
    expect(results).toHaveLength(3);
    expect(results[0]?.passed).toBe(false);
    expect(results[1]?.passed).toBe(false);
    expect(typeof results[2]?.passed).toBe('boolean');
  });
});

describe('evaluateAssertions: property test', () => {
  const jsonValue = fc.jsonValue({ maxDepth: 3 });
  const body = fc.oneof(
    jsonValue.map((v) => JSON.stringify(v) ?? 'null'),
    fc.string(),
    fc.constant(''),
    fc.constant('<html><body>not json</body></html>'),
    fc.constant('{"truncated": [1, 2'),
    fc.string({ unit: 'binary' }),
  );
  const headerName = fc.oneof(
    fc.constantFrom('content-type', 'x-id', 'set-cookie', 'location'),
    fc.string({ maxLength: 12 }),
  );
  const headers = fc.dictionary(
    headerName.map((n) => n.toLowerCase()),
    fc.string({ maxLength: 40 }),
    { maxKeys: 6 },
  );
  const res = fc.record({
    status: fc.integer({ min: 100, max: 599 }),
    headers,
    body,
    responseTime: fc.double({ min: 0, max: 60_000, noNaN: true }),
  });
  const property = fc.oneof(
    fc.constant(''),
    fc.constant('$'),
    fc.constantFrom(
      '$.a',
      '$.data[0].id',
      '$..id',
      '$[*]',
      '$.a.b.c',
      'a.b',
      '[0]',
      '$.x[?(@.y > 1)]',
      '$[',
      '$.[',
      '$..',
      'content-type',
      'X-ID',
    ),
    fc.string({ maxLength: 20 }),
    fc.string({ maxLength: 10 }).map((s) => `$.${s}`),
  );
  const target = fc.oneof(
    fc.string({ maxLength: 20 }),
    fc.integer().map(String),
    fc.double().map(String),
    fc.constantFrom('null', 'true', '[]', '{}', ''),
  );
  const regex = fc.oneof(
    fc.constant(null),
    fc.constant(''),
    fc.constantFrom('(\\d+)', '^(.)', '(unclosed', '[', '/ab+c/i', '(?<n>x)', '\\', 'a{2,', '(a)|(b)', '/x/g'),
    // short random patterns: many are invalid (an error), none can backtrack for long on short bodies
    fc.string({ maxLength: 8 }),
  );
  const assertionArb = fc.record({
    source: fc.constantFrom(...ASSERTION_SOURCES),
    comparison: fc.constantFrom(...ASSERTION_COMPARISONS),
    property,
    target,
    regex,
  });

  it('never throws; one result per assertion, each with a boolean passed', () => {
    fc.assert(
      fc.property(fc.array(assertionArb, { maxLength: 8 }), res, (assertions, response) => {
        const results = evaluateAssertions(assertions, response);
        expect(results).toHaveLength(assertions.length);
        for (const [i, r] of results.entries()) {
          expect(typeof r.passed).toBe('boolean');
          expect(r.source).toBe(assertions[i]?.source);
          // an error always means a failed assertion
          if (r.error !== undefined) expect(r.passed).toBe(false);
          // results are stored as JSON
          expect(() => JSON.stringify(r)).not.toThrow();
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('NOT_ variants are the negation whenever both evaluate', () => {
    const pairs: Array<[AssertionComparison, AssertionComparison]> = [
      ['EQUALS', 'NOT_EQUALS'],
      ['CONTAINS', 'NOT_CONTAINS'],
      ['HAS_KEY', 'NOT_HAS_KEY'],
      ['HAS_VALUE', 'NOT_HAS_VALUE'],
      ['IS_EMPTY', 'NOT_EMPTY'],
      ['IS_NULL', 'NOT_NULL'],
    ];
    fc.assert(
      fc.property(assertionArb, res, fc.constantFrom(...pairs), (a, response, [yes, no]) => {
        const [r1, r2] = evaluateAssertions(
          [
            { ...a, comparison: yes },
            { ...a, comparison: no },
          ],
          response,
        );
        if (r1?.error === undefined && r2?.error === undefined) expect(r1?.passed).toBe(!r2?.passed);
      }),
      { numRuns: 1000 },
    );
  });
});
