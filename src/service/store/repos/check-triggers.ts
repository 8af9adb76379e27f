import type { CheckTrigger, CheckTriggerRepo } from '../check-trigger-types.ts';
import type { SqlDatabase } from '../sql/database.ts';
import { TriggerTokens } from './trigger-tokens.ts';

interface TriggerRow {
  id: number;
  check_id: string;
  token: string;
  created_at: string;
  called_at: string | null;
  updated_at: string | null;
}

const toTrigger = (row: TriggerRow): CheckTrigger => ({
  id: row.id,
  checkId: row.check_id,
  token: row.token,
  createdAt: row.created_at,
  calledAt: row.called_at,
  updatedAt: row.updated_at,
});

export class SqlCheckTriggerRepo extends TriggerTokens<string, TriggerRow, CheckTrigger> implements CheckTriggerRepo {
  constructor(db: SqlDatabase) {
    super(db, { table: 'check_triggers', target: 'check_id', describe: (id) => `check ${id}` }, toTrigger);
  }
}
