import { getDb } from "~/models/db.server";

/** Who a verified sign-in says the user is: the identity provider's subject and the claims kept of it. */
export type UserIdentity = {
  issuer: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  locale: string | null;
};

export async function upsertUserByIdentity(
  args: UserIdentity & {
    /** The organisation claim of a sign-in's ID token; left as it was when not given. */
    orgClaim?: boolean | null;
  },
) {
  const { emailVerified, orgClaim, ...rest } = args;
  const claim = orgClaim === undefined ? {} : { org_claim: orgClaim };
  return getDb()
    .insertInto("users")
    .values({ ...rest, ...claim, email_verified: emailVerified, last_login_at: new Date() })
    .onConflict((oc) =>
      oc.columns(["issuer", "subject"]).doUpdateSet({
        email: args.email,
        email_verified: emailVerified,
        name: args.name,
        locale: args.locale,
        ...claim,
        last_login_at: new Date(),
      }),
    )
    .returning(["id", "email", "name"])
    .executeTakeFirstOrThrow();
}

export async function getUserById({ id }: { id: string }) {
  return getDb()
    .selectFrom("users")
    .where("id", "=", id)
    .select(["id", "email", "email_verified", "name", "issuer", "subject"])
    .executeTakeFirst();
}

export async function getUserByIdentity({ issuer, subject }: { issuer: string; subject: string }) {
  return getDb()
    .selectFrom("users")
    .where("issuer", "=", issuer)
    .where("subject", "=", subject)
    .select(["id", "email", "email_verified", "name", "issuer", "subject"])
    .executeTakeFirst();
}
