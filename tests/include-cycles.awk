# Reads "from to" edges between modules (a file's path without .c/.h) and prints every module
# that is in an include cycle: a strongly connected component of more than one (Tarjan).
{ if (!($1 in seen)) { seen[$1] = 1; nodes[++nn] = $1 }
  if (!($2 in seen)) { seen[$2] = 1; nodes[++nn] = $2 }
  adj[$1, ++deg[$1]] = $2 }
function visit(v,    i, w) {
	index_of[v] = low[v] = ++counter
	stack[++sp] = v; on[v] = 1
	for (i = 1; i <= deg[v]; i++) {
		w = adj[v, i]
		if (!(w in index_of)) { visit(w); if (low[w] < low[v]) low[v] = low[w] }
		else if (on[w] && index_of[w] < low[v]) low[v] = index_of[w]
	}
	if (low[v] == index_of[v]) {
		n = 0
		do { w = stack[sp--]; on[w] = 0; comp[++n] = w } while (w != v)
		if (n > 1) for (i = 1; i <= n; i++) print comp[i]
	}
}
END { for (i = 1; i <= nn; i++) if (!(nodes[i] in index_of)) visit(nodes[i]) }
