// A program as an integrator writes it: plain fetch, typed only by the
// client openapi-typescript generates from docs/openapi.json. It must
// compile under tsc --strict with no casts, no `any` and no @ts- comments
// (client_test.go checks): when it does not, the document is what is wrong.
//
// It sends what spec 4.4 and 4.5 require and nothing more — a sale with
// client_id, items and payment_plan; a lead with a name and only a phone —
// and patches one field of a service order, then prints each answer as a
// JSON line for the Go test, which checks them against the live server.
//
// Environment: OFICINA_API_URL (the server's root), OFICINA_API_KEY,
// OFICINA_CLIENT_ID, OFICINA_ORDER_ID.
import type { paths } from "./generated/openapi.js";

type Method = "get" | "post" | "patch" | "put" | "delete";

// The operation object of a path and method.
type Op<P extends keyof paths, M extends Method & keyof paths[P]> = paths[P][M];

// What an operation takes: its path parameters and its JSON body.
type PathParams<O> = O extends { parameters: { path: infer X } } ? X : Record<string, never>;
type JSONBody<O> = O extends { requestBody?: infer RB }
  ? NonNullable<RB> extends { content: { "application/json": infer B } } ? B : never
  : never;

// What it answers with status S as JSON.
type JSONAnswer<O, S extends number> = O extends { responses: infer Rs }
  ? S extends keyof Rs ? Rs[S] extends { content: { "application/json": infer R } } ? R : never : never
  : never;

function env(name: string): string {
  const v = process.env[name];
  if (v === undefined || v === "") {
    throw new Error(`${name} is not set`);
  }
  return v;
}

const baseURL = env("OFICINA_API_URL");
const apiKey = env("OFICINA_API_KEY");

interface Answer<T> {
  status: number;
  body: T;
}

// call sends one request and returns the status and the parsed JSON body,
// typed as the document says status S answers.
async function call<P extends keyof paths, M extends Method & keyof paths[P], S extends number>(
  method: M, path: P, params: PathParams<Op<P, M>>, body: JSONBody<Op<P, M>>, _expect: S,
): Promise<Answer<JSONAnswer<Op<P, M>, S>>> {
  let url: string = path;
  for (const [name, value] of Object.entries(params)) {
    url = url.replace(`{${name}}`, encodeURIComponent(String(value)));
  }
  const res = await fetch(baseURL + url, {
    method: method.toUpperCase(),
    headers: { "Authorization": `Bearer ${apiKey}`, "Content-Type": "application/json", "Accept-Language": "en" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? null : JSON.parse(text) };
}

function report(step: string, status: number, body: unknown): void {
  process.stdout.write(JSON.stringify({ step, status, body }) + "\n");
}

// (a) A sale with only what spec 4.4 requires: client, one custom item and
// a plan paid in full.
const sale = await call("post", "/public/v1/sales", {}, {
  client_id: env("OFICINA_CLIENT_ID"),
  items: [{ type: "custom", name: "Instalação de ar-condicionado", quantity: 1, unit_price_cents: 25000 }],
  payment_plan: { mode: "paid_full" },
}, 201);
report("sale", sale.status, sale.body);
if (sale.status === 201) {
  // Read back as the document types the answer.
  const paid: string = sale.body.payment_status;
  const total: number = sale.body.total_cents;
  report("sale.read", sale.status, { id: sale.body.id, payment_status: paid, total_cents: total });
}

// (b) A lead with a name and only a phone (spec 4.5: e-mail or phone).
const lead = await call("post", "/public/v1/leads", {}, {
  name: "Joana Lima",
  phone: "+55 11 91234-5678",
}, 201);
report("lead", lead.status, lead.body);
if (lead.status === 201) {
  const deduplicated: boolean = lead.body.deduplicated;
  const clientID: string = lead.body.lead.id;
  report("lead.read", lead.status, { client_id: clientID, deduplicated });
}

// (c) One field of a service order; everything else must stay as it was.
const patched = await call("patch", "/public/v1/service_orders/{id}", { id: env("OFICINA_ORDER_ID") }, {
  internal_notes: "Levar escada de 3 m",
}, 200);
report("patch", patched.status, patched.body);
if (patched.status === 200) {
  const notes: string | null | undefined = patched.body.internal_notes;
  report("patch.read", patched.status, { internal_notes: notes });
}
