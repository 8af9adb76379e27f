/**
 * Turns a request's `type` and `config` into an AlertChannelDefinition: the type's schema defaults
 * filled, its fields checked, URLs held to http(s), SMS/CALL refused without the operator's gateway.
 * Every refusal is a 400 naming the field.
 */
import { Compile } from 'typebox/compile';
import Value from 'typebox/value';
import { BadRequestError } from '../http/errors.ts';
import { assertHttpUrl } from '../routes/http-url.ts';
import {
  type AlertChannelDefinition,
  type AlertChannelType,
  CONFIG_SCHEMAS,
  URL_CONFIG_FIELDS,
} from './channel-config.ts';
import { type AlertGatewayConfig, SMS_GATEWAY_SETTING, VOICE_GATEWAY_SETTING } from './gateways.ts';

const checkers = Object.fromEntries(
  Object.entries(CONFIG_SCHEMAS).map(([type, schema]) => [type, Compile(schema)]),
) as {
  [K in AlertChannelType]: ReturnType<typeof Compile<(typeof CONFIG_SCHEMAS)[K]>>;
};

function assertGateway(type: AlertChannelType, gateways: AlertGatewayConfig): void {
  if (type === 'SMS' && !gateways.sms) {
    throw new BadRequestError(
      `body/type: SMS channels need an SMS gateway, and none is configured (the operator sets ${SMS_GATEWAY_SETTING})`,
    );
  }
  if (type === 'CALL' && !gateways.voice) {
    throw new BadRequestError(
      `body/type: CALL channels need a voice gateway, and none is configured (the operator sets ${VOICE_GATEWAY_SETTING})`,
    );
  }
}

/** The first schema error, as `body/config/<path> <what is wrong>`. */
function firstProblem(type: AlertChannelType, config: unknown): string | undefined {
  const errors = checkers[type].Errors(config);
  // An unknown property also fails its `false` subschema; the additionalProperties error says it better.
  const error = errors.find((e) => e.keyword !== 'boolean') ?? errors[0];
  if (!error) return undefined;
  const params = error.params as { requiredProperties?: string[]; additionalProperties?: string[] };
  if (error.keyword === 'required')
    return `body/config/${params.requiredProperties?.[0]} is required for ${type} channels`;
  if (error.keyword === 'additionalProperties') {
    return `body/config/${params.additionalProperties?.[0]} is not a ${type} channel setting (allowed: ${Object.keys(CONFIG_SCHEMAS[type].properties).join(', ')})`;
  }
  return `body/config${error.instancePath} ${error.message}`;
}

export function toChannelDefinition(
  type: AlertChannelType,
  config: unknown,
  gateways: AlertGatewayConfig,
): AlertChannelDefinition {
  assertGateway(type, gateways);
  const filled = Value.Default(CONFIG_SCHEMAS[type], structuredClone(config)) as Record<string, unknown>;
  const problem = firstProblem(type, filled);
  if (problem) throw new BadRequestError(problem);
  for (const field of URL_CONFIG_FIELDS[type])
    assertHttpUrl(`body/config/${field}`, filled[field] as string, { placeholders: false });
  return { type, config: filled } as AlertChannelDefinition;
}
