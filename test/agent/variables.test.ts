/**
 * The parts of variable substitution on their own: reading `{{...}}` references, the scope a run
 * resolves them in (built-ins, the job's merged variables, run variables) and the moment helper.
 * Through the daemon and a real target: variables-daemon.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { substituteVariables } from '../../src/agent/checks/variables/index.ts';
import { formatMoment, relativeDate } from '../../src/agent/checks/variables/moment.ts';
import { variableScope } from '../../src/agent/checks/variables/scope.ts';
import { renderTemplate } from '../../src/agent/checks/variables/template.ts';
import type { CheckDefinition, EnvironmentVariable } from '../../src/shared/checks/types.ts';
import { apiCheck } from './api-fixtures.ts';

const NOW = new Date('2020-08-26T14:03:09.045Z');
const RUN = { runId: 'run-1', region: 'eu-lab', now: NOW };

function render(text: string, vars: EnvironmentVariable[] = [], check: Partial<CheckDefinition> = {}) {
  return renderTemplate(
    text,
    variableScope(apiCheck({ url: 'http://x' }, { environmentVariables: vars, ...check } as never), RUN),
  );
}
const v = (key: string, value: string): EnvironmentVariable => ({ key, value, secret: false });

describe('renderTemplate', () => {
  it('URI-encodes double braces and inserts triple braces as they are', () => {
    const vars = [v('Q', 'a b&c/d?é')];
    expect(render('{{Q}}|{{{Q}}}', vars).text).toBe(`${encodeURIComponent('a b&c/d?é')}|a b&c/d?é`);
  });

  it('allows whitespace inside the braces', () => {
    expect(render('{{ Q }}-{{{  Q }}}', [v('Q', 'x y')]).text).toBe('x%20y-x y');
  });

  it('leaves braces that are not references alone, without a note', () => {
    const body = '{"a":{"b":{}}} {{#if x}} {{ not a name }} {{}}';
    expect(render(body)).toEqual({ text: body, unresolved: [] });
  });

  it('keeps a missing reference as written and reports it', () => {
    const out = render('a{{MISSING}}b{{{ALSO_MISSING}}}c');
    expect(out.text).toBe('a{{MISSING}}b{{{ALSO_MISSING}}}c');
    expect(out.unresolved.map((u) => u.reference)).toEqual(['{{MISSING}}', '{{{ALSO_MISSING}}}']);
    expect(out.unresolved[0]?.reason).toBe('no variable MISSING is defined for this check (check, group or account)');
  });

  it('substitutes a value once: a value that itself holds braces is not read again', () => {
    expect(render('{{{A}}}', [v('A', '{{B}}'), v('B', 'no')]).text).toBe('{{B}}');
  });
});

describe('variableScope', () => {
  it('takes the last of the merged variables: the job lists account, then group, then check', () => {
    const vars = [v('LEVEL', 'account'), v('LEVEL', 'group'), v('LEVEL', 'check')];
    expect(render('{{LEVEL}}', vars).text).toBe('check');
  });

  it('gives the run variables, which a variable of the same name overrides', () => {
    expect(
      render('{{{ACCOUNT_ID}}} {{{CHECK_ID}}} {{{CHECK_NAME}}} {{{CHECK_RUN_ID}}} {{{CHECK_TYPE}}} {{{REGION}}}').text,
    ).toBe('acc_test chk_test api test run-1 API eu-lab');
    expect(render('{{REGION}}', [v('REGION', 'mine')]).text).toBe('mine');
  });

  it('makes a fresh $UUID (v4) and $RANDOM_NUMBER (0 to 10000) at each occurrence', () => {
    const uuids = render(Array.from({ length: 20 }, () => '{{$UUID}}').join(' ')).text.split(' ');
    for (const u of uuids) expect(u).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(uuids).size).toBe(20);
    const numbers = render(Array.from({ length: 200 }, () => '{{$RANDOM_NUMBER}}').join(' '))
      .text.split(' ')
      .map(Number);
    for (const n of numbers) expect(Number.isInteger(n) && n >= 0 && n <= 10_000).toBe(true);
    expect(new Set(numbers).size).toBeGreaterThan(1);
  });

  it('evaluates moment with zero, one or two quoted arguments', () => {
    expect(render('{{{moment}}}').text).toBe('2020-08-26T14:03:09+00:00');
    expect(render('{{moment "YYYY-MM-DD"}}').text).toBe('2020-08-26');
    expect(render('{{moment "2 days ago" "YYYY-MM-DD"}}').text).toBe('2020-08-24');
    expect(render("{{moment 'last week' 'X'}}").text).toBe(String((Date.parse('2020-08-19T14:03:09.045Z') / 1000) | 0));
    // Double braces encode what the helper returns, as any other value.
    expect(render('{{moment "HH:mm"}}').text).toBe('14%3A03');
  });

  it('notes a moment it cannot evaluate and leaves it as written', () => {
    const out = render('{{moment "a fortnight hence" "X"}} {{moment X}}');
    expect(out.text).toBe('{{moment "a fortnight hence" "X"}} {{moment X}}');
    expect(out.unresolved[0]?.reason).toMatch(/cannot read the date "a fortnight hence"/);
    expect(out.unresolved[1]?.reason).toMatch(/must be quoted strings/);
  });
});

describe('moment formats and dates', () => {
  it('formats moment.js tokens in UTC', () => {
    expect(formatMoment(NOW, 'YYYY YY Q MMMM MMM MM M DDDD DDD DD Do D')).toBe(
      '2020 20 3 August Aug 08 8 239 239 26 26th 26',
    );
    expect(formatMoment(NOW, 'dddd ddd dd d HH H hh h kk k mm m ss s SSS SS S A a X x Z ZZ')).toBe(
      `Wednesday Wed We 3 14 14 02 2 14 14 03 3 09 9 045 04 0 PM pm 1598450589 1598450589045 +00:00 +0000`,
    );
    expect(formatMoment(NOW, '[Today is] dddd')).toBe('Today is Wednesday');
  });

  it('writes ordinals as moment does', () => {
    const day = (d: number) => formatMoment(new Date(Date.UTC(2020, 0, d)), 'Do');
    expect([1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 31].map(day)).toEqual([
      '1st',
      '2nd',
      '3rd',
      '4th',
      '11th',
      '12th',
      '13th',
      '21st',
      '22nd',
      '23rd',
      '31st',
    ]);
  });

  it('reads relative dates', () => {
    const at = (e: string) => relativeDate(e, NOW)?.toISOString();
    expect(at('now')).toBe(NOW.toISOString());
    expect(at('yesterday')).toBe('2020-08-25T14:03:09.045Z');
    expect(at('tomorrow')).toBe('2020-08-27T14:03:09.045Z');
    expect(at('3 hours ago')).toBe('2020-08-26T11:03:09.045Z');
    expect(at('in 2 weeks')).toBe('2020-09-09T14:03:09.045Z');
    expect(at('1 month from now')).toBe('2020-09-26T14:03:09.045Z');
    expect(at('next year')).toBe('2021-08-26T14:03:09.045Z');
    expect(at('last minute')).toBe('2020-08-26T14:02:09.045Z');
    // As moment: a month later than 31 January is the last day of February.
    expect(relativeDate('1 month from now', new Date('2020-01-31T00:00:00Z'))?.toISOString()).toBe(
      '2020-02-29T00:00:00.000Z',
    );
    expect(relativeDate('next year', new Date('2020-02-29T00:00:00Z'))?.toISOString()).toBe('2021-02-28T00:00:00.000Z');
    expect(at('someday')).toBeUndefined();
    expect(at('2.5 days ago')).toBeUndefined();
  });
});

describe('substituteVariables', () => {
  it('substitutes API checks only in the fields the reference names', () => {
    const check = apiCheck(
      {
        url: 'http://h/{{A}}',
        headers: [{ key: '{{A}}', value: '{{A}}' }],
        queryParameters: [{ key: '{{A}}', value: '{{A}}' }],
        assertions: [{ source: 'TEXT_BODY', comparison: 'EQUALS', property: '{{A}}', target: '{{A}}' }],
      },
      { environmentVariables: [v('A', 'x')] },
    );
    const { check: out, notes } = substituteVariables(check, RUN);
    if (out.checkType !== 'API') throw new Error('not an API check');
    expect(out.request.url).toBe('http://h/x');
    expect(out.request.headers).toEqual([{ key: '{{A}}', value: 'x' }]);
    expect(out.request.queryParameters).toEqual([{ key: '{{A}}', value: 'x' }]);
    expect(out.request.assertions[0]).toMatchObject({ property: '{{A}}', target: '{{A}}' });
    expect(notes).toEqual([]);
  });

  it('gives REQUEST_URL, the substituted URL, in the fields after the URL', () => {
    const check = apiCheck(
      {
        url: 'http://h/{{{A}}}?q=1',
        headers: [{ key: 'X-Url', value: '{{{REQUEST_URL}}}' }],
        body: 'u={{REQUEST_URL}}',
      },
      { environmentVariables: [v('A', 'x')] },
    );
    const { check: out, notes } = substituteVariables(check, RUN);
    if (out.checkType !== 'API') throw new Error('not an API check');
    expect(out.request.headers[0]?.value).toBe('http://h/x?q=1');
    expect(out.request.body).toBe(`u=${encodeURIComponent('http://h/x?q=1')}`);
    expect(notes).toEqual([]);
  });

  it('leaves other check types as they are', () => {
    const tcp = {
      ...apiCheck({ url: '' }),
      checkType: 'TCP',
      request: { hostname: '{{A}}', port: 1, data: '{{A}}', ipFamily: 'IPv4', assertions: [] },
    };
    const { check, notes } = substituteVariables(tcp as unknown as CheckDefinition, RUN);
    expect(check).toBe(tcp);
    expect(notes).toEqual([]);
  });
});
