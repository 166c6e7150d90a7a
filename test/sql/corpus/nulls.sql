-- NULLs: three-valued AND/OR/NOT, IS [NOT] NULL/TRUE/FALSE, IN / NOT IN with NULLs,
-- coalesce, nullif, NULL through operators and predicates.

SELECT id, active AND qty > 0 AS a, active OR qty > 0 AS o, NOT active AS n FROM tiny;

SELECT id, active AND NULL AS a, active OR NULL AS o, NULL AND false AS x, NULL OR true AS y FROM tiny;

SELECT id FROM tiny WHERE active AND qty > 0;

SELECT id FROM tiny WHERE active OR qty > 0;

SELECT id FROM tiny WHERE NOT (active OR qty > 0);

SELECT id FROM tiny WHERE NOT (active AND qty > 0);

SELECT id FROM items WHERE NOT (price > 0);

SELECT count(*) AS n FROM items WHERE price > 0 OR NOT price > 0;

SELECT count(*) AS n FROM items WHERE active OR NOT active;

SELECT id, active IS TRUE AS t, active IS NOT TRUE AS nt, active IS FALSE AS f, active IS NOT FALSE AS nf FROM tiny;

SELECT id FROM items WHERE active IS NOT TRUE;

SELECT id FROM items WHERE active IS FALSE;

SELECT id FROM items WHERE (qty > 100) IS NOT FALSE;

SELECT id, name IS NULL AS a, name IS NOT NULL AS b, price IS NULL AS c, created IS NULL AS d, updated IS NOT NULL AS e FROM tiny;

SELECT id FROM items WHERE active IS NULL;

SELECT id FROM items WHERE category IS NULL;

SELECT id FROM items WHERE category IS NULL OR category = 'beta';

SELECT id FROM items WHERE updated IS NULL AND created IS NOT NULL;

SELECT id, qty IN (1, 7, NULL) AS a, qty NOT IN (1, NULL) AS b, qty IN (1, 7) AS c, qty NOT IN (1, 7) AS d FROM tiny;

SELECT id, qty = NULL AS a, qty <> NULL AS b FROM tiny;

SELECT count(*) AS n FROM items WHERE qty = NULL;

SELECT count(*) AS n FROM items WHERE category NOT IN ('alpha', NULL);

SELECT id, coalesce(name, '(none)') AS a, coalesce(price, qty, 0) AS b, coalesce(NULL, NULL, 3) AS c FROM tiny;

SELECT id, coalesce(category, name, 'nothing') AS c FROM items;

SELECT id, coalesce(active, false) AS a, coalesce(created, DATE '1999-09-09') AS d FROM items;

SELECT id, nullif(qty, 0) AS a, nullif(name, '') AS b, nullif(category, 'x') AS c FROM tiny;

SELECT id, nullif(price, 0) AS p, nullif(year, 2020) AS y FROM items;

SELECT NULL IS NULL AS a, NULL IS NOT NULL AS b, CAST(NULL AS INT) IS NULL AS c;

SELECT id, CAST(NULL AS INT) + qty AS a, NULL || name AS b FROM tiny;

SELECT id, price BETWEEN 0 AND 10 AS a, price NOT BETWEEN 0 AND 10 AS b FROM tiny;

SELECT id, name LIKE 'a%' AS a, name NOT LIKE 'a%' AS b, name ILIKE 'B' AS c FROM tiny;

SELECT id FROM items WHERE NOT (name LIKE '%e%');

SELECT id, NOT NOT active AS a FROM tiny;

SELECT id, CASE WHEN active THEN 'yes' WHEN NOT active THEN 'no' ELSE 'unknown' END AS a FROM items;
