import type { ColumnType, Generated } from "kysely";
import type { CreatedAt } from "./schema";

// Hand-kept type of migration 0010's table: deleted accounts whose storage prefixes the sweep still watches.
// Part of `Database` in schema.ts.

export interface AccountPurgesTable {
  /** The deleted user's id: the owner segment of its storage keys. */
  owner_id: string;
  requested_at: CreatedAt;
  /** When a pass last found the prefixes empty. */
  checked_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  attempts: Generated<number>;
}
