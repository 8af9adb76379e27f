/** Whether `file` exists and this process may execute it (a tool the agent or a benchmark needs). */
import { accessSync, constants } from 'node:fs';

export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
