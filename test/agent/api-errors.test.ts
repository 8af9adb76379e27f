/** Words for network failures (api/errors.ts): what a user reads when a request to a target fails. */
import { describe, expect, it } from 'vitest';
import {
  describeRequestError,
  isTargetError,
  TargetError,
  timeoutMessage,
  tlsVerificationError,
} from '../../src/agent/checks/api/errors.ts';

const err = (code: string, message = 'boom'): Error => Object.assign(new Error(message), { code });
const at = { host: 'api.example.com', port: 443, address: '203.0.113.7', phase: 'connect' as const };

describe('describeRequestError', () => {
  const cases: Array<[string, Error, Parameters<typeof describeRequestError>[1], string]> = [
    [
      'ENOTFOUND',
      err('ENOTFOUND'),
      { ...at, address: null, phase: 'dns' },
      'DNS failure: could not resolve "api.example.com" (ENOTFOUND)',
    ],
    [
      'EAI_AGAIN',
      err('EAI_AGAIN'),
      { ...at, address: null, phase: 'dns' },
      'DNS failure: could not resolve "api.example.com" (EAI_AGAIN)',
    ],
    [
      'c-ares ECONNREFUSED while resolving',
      err('ECONNREFUSED'),
      { ...at, address: null, phase: 'dns' },
      'DNS failure: could not resolve "api.example.com" (ECONNREFUSED)',
    ],
    ['ECONNREFUSED', err('ECONNREFUSED'), at, 'Connection refused by 203.0.113.7:443'],
    [
      'ECONNREFUSED on IPv6',
      err('ECONNREFUSED'),
      { ...at, address: '2001:db8::1' },
      'Connection refused by [2001:db8::1]:443',
    ],
    ['ECONNRESET', err('ECONNRESET'), { ...at, phase: 'response' }, 'Connection reset'],
    [
      'EHOSTUNREACH',
      err('EHOSTUNREACH'),
      at,
      'Host unreachable: this agent has no route to api.example.com (203.0.113.7:443: no route to the host)',
    ],
    [
      'ENETUNREACH',
      err('ENETUNREACH'),
      at,
      'Network unreachable: this agent has no route to api.example.com (203.0.113.7:443: no route to the network)',
    ],
    [
      'EINVAL while connecting (a blackhole route)',
      err('EINVAL', 'connect EINVAL 203.0.113.7:443 - Local (0.0.0.0:0)'),
      at,
      'Network unreachable: this agent has no route to api.example.com (203.0.113.7:443: no route to the network)',
    ],
    [
      'EINVAL elsewhere',
      err('EINVAL', 'invalid argument'),
      { ...at, phase: 'response' },
      'Request failed: invalid argument (EINVAL)',
    ],
    [
      'EADDRNOTAVAIL',
      err('EADDRNOTAVAIL'),
      { ...at, address: '2001:db8::1' },
      'Network unreachable: this agent has no route to api.example.com ([2001:db8::1]:443: no usable source address)',
    ],
    [
      'undici socket closed',
      err('UND_ERR_SOCKET', 'other side closed'),
      { ...at, phase: 'response' },
      'Connection closed by the server before it sent a response',
    ],
    [
      'undici socket error wrapping a reset',
      Object.assign(err('UND_ERR_SOCKET'), { cause: err('ECONNRESET') }),
      { ...at, phase: 'body' },
      'Connection reset',
    ],
    [
      'TLS handshake failure',
      err('EPROTO', 'write EPROTO 0A00010B:SSL routines:ssl3_get_record:wrong version number'),
      { ...at, phase: 'tls' },
      'TLS error: wrong version number — the server does not seem to speak TLS on this port (EPROTO)',
    ],
    [
      'OpenSSL 3 message with source path',
      err(
        'ERR_SSL_WRONG_VERSION_NUMBER',
        'C0:error:0A00010B:SSL routines::wrong version number:../deps/openssl/ssl/x.c:77:\n',
      ),
      { ...at, phase: 'tls' },
      'TLS error: wrong version number — the server does not seem to speak TLS on this port (ERR_SSL_WRONG_VERSION_NUMBER)',
    ],
    [
      'expired certificate code',
      err('CERT_HAS_EXPIRED'),
      { ...at, phase: 'response' },
      'TLS error: certificate has expired (CERT_HAS_EXPIRED)',
    ],
    [
      'bad HTTP',
      err('HPE_INVALID_CONSTANT', 'Expected HTTP/'),
      { ...at, phase: 'response' },
      'Invalid HTTP response from 203.0.113.7:443: Expected HTTP/ (HPE_INVALID_CONSTANT)',
    ],
    [
      'anything else with a code',
      err('EWHATEVER', 'odd'),
      { ...at, phase: 'response' },
      'Request failed: odd (EWHATEVER)',
    ],
  ];
  it.each(cases)('%s', (_name, e, c, expected) => {
    expect(describeRequestError(e, c)).toBe(expected);
  });

  it('TargetError messages pass through', () => {
    expect(describeRequestError(new TargetError('X', 'as written'), at)).toBe('as written');
  });
});

describe('helpers', () => {
  it('tlsVerificationError names self-signed, mismatched and unknown codes', () => {
    expect(tlsVerificationError('DEPTH_ZERO_SELF_SIGNED_CERT').message).toBe(
      'TLS error: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)',
    );
    expect(tlsVerificationError('ERR_TLS_CERT_ALTNAME_INVALID').message).toBe(
      'TLS error: certificate does not match the host name (ERR_TLS_CERT_ALTNAME_INVALID)',
    );
    expect(tlsVerificationError('SOME_NEW_CODE').message).toBe('TLS error: some new code (SOME_NEW_CODE)');
  });

  it('timeoutMessage says what was interrupted', () => {
    expect(timeoutMessage(3000, 'response')).toBe('Timed out after 3000 ms while waiting for the response');
    expect(timeoutMessage(3000, 'dns')).toBe('Timed out after 3000 ms while resolving the host name');
    expect(timeoutMessage(3000, 'tls')).toBe('Timed out after 3000 ms while in the TLS handshake');
  });

  it('isTargetError: coded I/O errors are the target’s, plain programming errors are the agent’s', () => {
    expect(isTargetError(err('ECONNRESET'))).toBe(true);
    expect(isTargetError(new TargetError('X', 'y'))).toBe(true);
    expect(isTargetError(new TypeError('x is not a function'))).toBe(false);
  });
});
