import { DomainError } from "./domain-error.server";

// ASVS 5.0 15.3.5, no type juggling: a JSON body's optional fields, strictly typed. Absent or null is absent; a value
// of another JSON type is refused with the field's name — a number for a file name, a string for a flag, a list for
// an object — never read as something else or quietly replaced by a default
// (tests/integration/api-wrong-types.test.ts sends every JSON call of the API such values).

type Body = Record<string, unknown>;

const refuse = (field: string, message: string) =>
  new DomainError("invalid", `common:errors.${message}`, [], { field });

const absent = (value: unknown) => value === undefined || value === null;

/** A text field: its string, or undefined when it was not sent. */
export function optionalText(body: Body, field: string, name = field): string | undefined {
  const value = body[field];
  if (absent(value)) return undefined;
  if (typeof value !== "string") throw refuse(name, "fieldNotText");
  return value;
}

/**
 * A key naming one of the caller's records (`s3_key`, `key`): the string as sent. Another type is refused with the
 * owning service's "key required" message (`message`), as the service refuses a blank one: the detail stays the same
 * whichever check catches it.
 */
export function requiredKey(body: Body, field: string, message: string): string {
  const value = body[field];
  if (typeof value !== "string") throw new DomainError("invalid", message);
  return value;
}

/**
 * A text the call cannot do without (a refinement's instruction, its letter text): the string as sent, untrimmed.
 * Another type, none, or a blank one is refused with the call's own "required" message (`message`).
 */
export function requiredText(body: Body, field: string, message: string): string {
  const value = body[field];
  if (typeof value !== "string" || !value.trim()) throw new DomainError("invalid", message);
  return value;
}

/** A flag: true or false, or undefined when it was not sent. */
export function optionalFlag(body: Body, field: string, name = field): boolean | undefined {
  const value = body[field];
  if (absent(value)) return undefined;
  if (typeof value !== "boolean") throw refuse(name, "fieldNotFlag");
  return value;
}

/** An object (not a list): its fields, or undefined when it was not sent. */
export function optionalObject(body: Body, field: string, name = field): Body | undefined {
  const value = body[field];
  if (absent(value)) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) throw refuse(name, "fieldNotObject");
  return value as Body;
}
