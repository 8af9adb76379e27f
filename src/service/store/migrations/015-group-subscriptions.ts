/**
 * Check groups kept their alertChannelSubscriptions in their JSON body, where neither the channel's
 * subscriptions nor the alert fan-out saw them. They move into alert_channel_subscriptions, the one
 * place every reader uses, and leave the body. An id that is no longer a channel of the group's
 * account is dropped: it could never alert.
 */
import type { Migration, MigrationDb } from './index.ts';

interface GroupRow {
  id: number;
  account_id: string;
  body: string;
}

type BodySubscriptions = Array<{ alertChannelId?: unknown; activated?: unknown }>;

export const migration015: Migration = {
  version: 15,
  name: 'group-subscriptions',
  async up(db: MigrationDb) {
    const groups = await db.all<GroupRow>(
      "SELECT id, account_id, body FROM check_groups WHERE body LIKE '%alertChannelSubscriptions%'",
    );
    for (const group of groups) {
      const { alertChannelSubscriptions, ...body } = JSON.parse(group.body) as {
        alertChannelSubscriptions?: BodySubscriptions;
      };
      for (const sub of alertChannelSubscriptions ?? []) {
        if (typeof sub.alertChannelId !== 'number') continue;
        await db.run(
          `INSERT INTO alert_channel_subscriptions (channel_id, group_id, activated)
           SELECT id, CAST(? AS INTEGER), CAST(? AS INTEGER) FROM alert_channels WHERE id = ? AND account_id = ?
           ON CONFLICT DO NOTHING`,
          [group.id, sub.activated === false ? 0 : 1, sub.alertChannelId, group.account_id],
        );
      }
      await db.run('UPDATE check_groups SET body = ? WHERE id = ?', [JSON.stringify(body), group.id]);
    }
  },
};
