// Checks the live vfagent API against api/openapi.yaml, with validators we
// did not write: swagger-parser validates the spec itself, Ajv (JSON Schema
// 2020-12) validates every live answer against the schema the spec gives for
// its status. Also: the routing table (api/router.c) and the spec list the
// same routes.
// Usage: node check.mjs SPEC ROUTER_C SOCKET
import SwaggerParser from "@apidevtools/swagger-parser";
import Ajv2020 from "ajv/dist/2020.js";
import fs from "node:fs";
import http from "node:http";

const [spec_path, router_path, socket] = process.argv.slice(2);
let failures = 0;
const fail = (msg) => { console.log(`FAIL: ${msg}`); failures++; };

const api = await SwaggerParser.validate(spec_path);
const ajv = new Ajv2020({ strict: false, allErrors: true });

// 1. the same routes in the code and in the spec
const code = new Set();
for (const m of fs.readFileSync(router_path, "utf8").matchAll(/\{ "([A-Z]+)", "(\/[^"]*)", api_/g))
	code.add(`${m[1]} ${m[2]}`);
const spec = new Set();
for (const [path, item] of Object.entries(api.paths))
	for (const method of ["get", "put", "post", "delete", "patch"])
		if (item[method]) spec.add(`${method.toUpperCase()} ${path}`);
for (const r of code) if (!spec.has(r)) fail(`route ${r} is in api/router.c but not in the spec`);
for (const r of spec) if (!code.has(r)) fail(`route ${r} is in the spec but not in api/router.c`);

function request(method, path, body, headers = {}) {
	return new Promise((resolve, reject) => {
		const req = http.request({ socketPath: socket, method, path, headers }, (res) => {
			let data = "";
			if (res.headers["content-type"] === "text/event-stream") {
				res.destroy();
				return resolve({ status: res.statusCode, type: res.headers["content-type"], data });
			}
			res.on("data", (c) => (data += c));
			res.on("end", () => resolve({ status: res.statusCode, type: res.headers["content-type"], data }));
		});
		req.on("error", reject);
		if (body !== undefined) req.write(typeof body === "string" ? body : JSON.stringify(body));
		req.end();
	});
}

// the spec path template that @path matches
function template(path) {
	const p = path.split("?")[0];
	for (const t of Object.keys(api.paths)) {
		const re = new RegExp("^" + t.replace(/\{[^}]+\}/g, "[^/]+") + "$");
		if (re.test(p)) return t;
	}
	return null;
}

async function check(method, path, body, want, headers) {
	const res = await request(method, path, body, headers);
	const t = template(path);
	const op = t && api.paths[t][method.toLowerCase()];
	if (!op) return fail(`${method} ${path}: not in the spec`);
	if (res.status !== want) fail(`${method} ${path}: HTTP ${res.status}, wanted ${want}: ${res.data}`);
	const r = op.responses[String(res.status)] || op.responses.default;
	if (!r) return fail(`${method} ${path}: HTTP ${res.status} is not documented`);
	if (!r.content) {
		if (res.data.length) fail(`${method} ${path}: a body where the spec has none`);
		return res;
	}
	const type = (res.type || "").split(";")[0];
	const media = r.content[type];
	if (!media) return fail(`${method} ${path}: content type ${type} is not documented for ${res.status}`);
	if (type === "application/json") {
		const validate = ajv.compile(media.schema);
		const json = JSON.parse(res.data);
		if (!validate(json))
			fail(`${method} ${path} ${res.status}: ${ajv.errorsText(validate.errors)}\n  ${res.data.slice(0, 300)}`);
		return { ...res, json };
	}
	return res;
}

const owner = { kind: "vm", name: "one-42" };
await check("GET", "/v1/host", undefined, 200);
await check("GET", "/v1/host/checks", undefined, 200);
await check("GET", "/v1/health", undefined, 200);
await check("GET", "/metrics", undefined, 200);
await check("GET", "/v1/pfs", undefined, 200);
await check("GET", "/v1/pfs/0000:3b:00.0", undefined, 200);
await check("GET", "/v1/pfs/0000:99:00.0", undefined, 404);
await check("GET", "/v1/pfs/zz", undefined, 400);
await check("GET", "/v1/vfs", undefined, 200);
await check("GET", "/v1/vfs?pool=eth&state=free", undefined, 200);
await check("GET", "/v1/vfs?state=nope", undefined, 400);
await check("GET", "/v1/vfs/0000:3b:00.2", undefined, 200);
await check("GET", "/v1/vfs/0000:3b:01.7", undefined, 404);
await check("GET", "/v1/pools", undefined, 200);
const a = await check("POST", "/v1/allocations", { pool: "ib", count: 2, owner, ip: "10.1.0.5/16" }, 201,
	{ "Idempotency-Key": "spec-1" });
await check("POST", "/v1/allocations", { pool: "ib", count: 2, owner, ip: "10.1.0.5/16" }, 200,
	{ "Idempotency-Key": "spec-1" });
await check("POST", "/v1/allocations", { pool: "ib", count: 2, owner }, 409, { "Idempotency-Key": "spec-1" });
await check("POST", "/v1/allocations", { pool: "ib", count: 64, owner }, 409);
await check("POST", "/v1/allocations", { pool: "nope", owner }, 404);
await check("POST", "/v1/allocations", { pool: "ib", owner, extra: 1 }, 400);
await check("POST", "/v1/allocations", "x".repeat(70000), 413);
await check("GET", "/v1/pcie", undefined, 200);
const near = { pool: "ib", owner, near: "0000:39:00.0", max_distance: "PIX" };
const n = await check("POST", "/v1/allocations", near, 201);
await check("POST", "/v1/allocations", { ...near, count: 4 }, 409);
await check("POST", "/v1/allocations", { ...near, near: "0000:99:00.0" }, 404);
await check("POST", "/v1/allocations", { ...near, near: "gpu0" }, 400);
await check("DELETE", `/v1/allocations/${n.json?.id}`, undefined, 204);
await check("GET", "/v1/allocations", undefined, 200);
await check("GET", "/v1/allocations?owner=vm:one-42&include_released=true", undefined, 200);
const id = a.json?.id;
await check("GET", `/v1/allocations/${id}`, undefined, 200);
await check("PUT", "/v1/pfs/0000:3b:00.0/numvfs", { numvfs: 2, dry_run: true }, 409);
await check("PUT", "/v1/pfs/0000:af:00.0/numvfs", { numvfs: 6, dry_run: true }, 200);
await check("PUT", "/v1/pfs/0000:af:00.0/numvfs", { numvfs: 6 }, 200);
await check("PUT", "/v1/pfs/0000:af:00.0/numvfs", { numvfs: "6" }, 400);
await check("POST", `/v1/allocations/${id}/attach`, { domain: "one-42" }, 404);
await check("POST", `/v1/allocations/${id}/attach`, { domain: "test", live: true }, 403);
await check("POST", `/v1/allocations/${id}/attach`, { domain: "test", live: 1 }, 400);
const t = await check("POST", "/v1/allocations", { pool: "eth", owner: { kind: "vm", name: "test" } }, 201);
await check("POST", `/v1/allocations/${t.json?.id}/attach`, { domain: "test", live: true }, 409);
await check("DELETE", `/v1/allocations/${t.json?.id}`, undefined, 204);
await check("GET", "/v1/allocations?pool=ib&state=reserved", undefined, 200);
await check("GET", "/v1/allocations?pol=ib", undefined, 400);
await check("POST", `/v1/allocations/${id}/detach`, undefined, 409);
await check("POST", `/v1/allocations/${id}/attach`, { netns: "no-such-ns" }, 404);
await check("POST", `/v1/allocations/${id}/attach`, { netns: "../x" }, 400);
await check("POST", "/v1/domain-xml", "<domain><name>x</name></domain>", 200, { "Content-Type": "application/xml" });
await check("POST", "/v1/domain-xml", "<domain>", 400, { "Content-Type": "application/xml" });
await check("POST", "/v1/domain-xml",
	"<domain><name>one-1</name><devices><interface type='bridge'><source bridge='sriov_eth0'/>" +
	"<mac address='02:00:0a:00:00:01'/></interface></devices></domain>", 200,
	{ "Content-Type": "application/xml" });
await check("GET", "/v1/events", undefined, 200);
const pk = await check("POST", "/v1/allocations", { pool: "ib", owner, pkey: "0x8001", membership: "full" }, 201);
await check("POST", "/v1/allocations", { pool: "ib", owner, pkey: "0xffff" }, 400);
await check("GET", "/v1/partitions", undefined, 200);
await check("DELETE", `/v1/allocations/${pk.json?.id}`, undefined, 204);
await check("PATCH", `/v1/allocations/${id}`, { trust: true, max_tx_rate: 10 }, 200);
await check("PATCH", `/v1/allocations/${id}`, { mac: "02:00:0a:00:00:09" }, 400);
await check("PATCH", "/v1/allocations/00000000-0000-4000-8000-000000000000", { vlan: 5 }, 404);
await check("DELETE", `/v1/allocations/${id}`, undefined, 204);
await check("PATCH", `/v1/allocations/${id}`, { vlan: 5 }, 409);
await check("DELETE", `/v1/allocations/${id}`, undefined, 404);
await check("GET", "/v1/allocations/not-an-id", undefined, 400);

console.log(`openapi: ${code.size} routes in code and spec; ${failures} failure(s)`);
process.exit(failures ? 1 : 0);
