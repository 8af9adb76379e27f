/**
 * GET's shape for a check of any type (GET /v1/checks, GET /v1/checks/{id}): one of the per-type
 * response schemas, told apart by their checkType enum. A type that gains endpoints adds its
 * response schema here.
 */
import { Type } from 'typebox';
import { ApiCheckResponse } from './api-check-schema.ts';
import { BrowserCheckResponse } from './browser-check-schema.ts';
import { DnsCheckResponse } from './dns-check-schema.ts';
import { HeartbeatCheckResponse } from './heartbeat-check-schema.ts';
import { IcmpCheckResponse } from './icmp-check-schema.ts';
import { MultiStepCheckResponse } from './multistep-check-schema.ts';
import { PlaywrightCheckResponse } from './playwright-check-schema.ts';
import { TcpCheckResponse } from './tcp-check-schema.ts';
import { SslCheckResponse } from './ssl-check-schema.ts';
import { UrlCheckResponse } from './url-check-schema.ts';

export const CheckResponse = Type.Union([
  ApiCheckResponse,
  TcpCheckResponse,
  DnsCheckResponse,
  IcmpCheckResponse,
  BrowserCheckResponse,
  MultiStepCheckResponse,
  PlaywrightCheckResponse,
  HeartbeatCheckResponse,
  UrlCheckResponse,
  SslCheckResponse,
]);
