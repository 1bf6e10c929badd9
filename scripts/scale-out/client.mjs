// The client: JSON calls through nginx with the session cookie, noting which instance answered.
import { signIn as followSignIn } from "../../bench/support.mjs";
import { APP, PORTS } from "./config.mjs";
import { ProofError, check, current, note } from "./report.mjs";

export let cookie = "";
export function setCookie(value) {
  cookie = value;
}

export async function call(method, url, { json, body, headers = {}, expect = [200] } = {}) {
  const t0 = Date.now();
  const target = url.startsWith("http") ? url : `${APP}${url}`;
  const response = await fetch(target, {
    method,
    redirect: "manual",
    headers: {
      cookie,
      origin: APP,
      ...(json !== undefined ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    body: json !== undefined ? JSON.stringify(json) : body,
    ...(body && typeof body.pipe === "function" ? { duplex: "half" } : {}),
  });
  const instance = response.headers.get("x-skribent-instance");
  if (instance && current) {
    current.served[instance] = (current.served[instance] ?? 0) + 1;
    current.requests += 1;
  }
  const type = response.headers.get("content-type") ?? "";
  const data = type.includes("json") ? await response.json() : await response.text();
  const ms = Date.now() - t0;
  if (!expect.includes(response.status)) {
    throw new ProofError(
      `${method} ${new URL(target).pathname} answered ${response.status} from ${instance ?? "?"}: ${JSON.stringify(data).slice(0, 300)}`,
    );
  }
  return { status: response.status, data, instance, ms, response };
}
export const say = (method, p, r) => note(`[${r.instance ?? "-"}] ${method} ${p} → ${r.status} (${r.ms} ms)`);

/** bench/support.mjs's sign-in, through nginx, noting who answered each app hop. */
export async function signIn(accountId) {
  const hops = [];
  const cookies = await followSignIn(APP, accountId, {
    onHop(url, response, method) {
      const instance = response.headers.get("x-skribent-instance");
      const where = new URL(url);
      hops.push(`${where.port === String(PORTS.idp) ? "IdP" : `[${instance}]`} ${method} ${where.pathname}`);
      if (instance) {
        current.served[instance] += 1;
        current.requests += 1;
      }
      // 200: the page that refreshes to where the user was going, with the session cookie set.
      if (where.pathname === "/auth/callback")
        check(response.status === 200, `the callback answered ${response.status}`);
    },
  }).catch((error) => {
    throw /^sign-in/.test(error?.message) ? new ProofError(error.message) : error;
  });
  note(`hops: ${hops.join(" → ")}`);
  return cookies;
}
