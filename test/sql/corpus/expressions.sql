-- Arithmetic (+ - * / %) on integers of every width and on floats, precedence, comparisons in
-- the projection. Integer / integer truncates toward zero (PostgreSQL); the runner sets DuckDB's
-- integer_division so DuckDB's `/` does the same.

SELECT 7 / 2 AS a, -7 / 2 AS b, 7 % 3 AS c, -7 % 3 AS d, 7 / 2.0 AS e;

SELECT 2 + 3 * 4 AS a, (2 + 3) * 4 AS b, 10 - 2 - 3 AS c, 2 * 3 % 4 AS d, 100 / 10 / 5 AS e;

SELECT 1.5 + 2.25 AS a, 0.1 + 0.2 AS b, 1e3 * 2 AS c, 10.0 / 4 AS d;

SELECT 3000000000 + 1 AS a, 9223372036854775807 AS b, -9223372036854775807 - 1 AS c;

SELECT 1 + NULL AS a, NULL * 2 AS b, NULL / 3 AS c;

SELECT id, qty + 1, qty - 1, qty * 2, qty / 7, qty % 7 FROM items;

SELECT id, price + 1, price - qty, price * qty, price / 4 FROM items;

SELECT id, price / qty AS ratio FROM items WHERE qty <> 0;

SELECT id, qty / 3 AS q, qty % 3 AS r FROM tiny WHERE qty BETWEEN -1000 AND 1000;

SELECT id, -qty AS neg, -price AS negp FROM tiny WHERE id <> 5;

SELECT id, - (qty + 1) AS n FROM items;

SELECT id, id * 1000000000 AS big, id - 10000 AS below FROM items WHERE id < 50;

-- DuckDB types the literal 1000 as SMALLINT here (it fits), so year * 1000 overflows there;
-- in PostgreSQL smallint * integer is integer.
-- duckdb: SELECT id, qty + year AS a, CAST(year AS INT) * 1000 AS b, year - 2000 AS c FROM items
SELECT id, qty + year AS a, year * 1000 AS b, year - 2000 AS c FROM items;

SELECT id, year + year AS y2 FROM items;

SELECT id, price % 3 AS m FROM items;

SELECT id, qty * 1.5 AS a, qty / 2.0 AS b FROM items;

SELECT id, (price + qty) * (year - 2014) / 3 AS e FROM items;

SELECT id, price * 0 AS z FROM items;

SELECT id, qty > 100 AS a, price <= 0 AS b, name = 'Widget' AS c, created < DATE '2020-01-01' AS d FROM items;

SELECT id, qty = year AS a, qty <> qty AS b, price >= qty AS c FROM items;

SELECT id, updated >= TIMESTAMP '2022-01-01 00:00:00' AS recent, created = DATE '2021-05-05' AS d FROM items;

SELECT 1 < 2 AS a, 2 <= 2 AS b, 3 > 4 AS c, 'a' < 'b' AS d, 'B' < 'a' AS e, true > false AS f, DATE '2020-01-01' < DATE '2020-01-02' AS g;

SELECT 'abc' = 'abc' AS a, 'abc' <> 'ABC' AS b, '' < 'a' AS c, 'ＷＩＤＧＥＴ' < '🎉' AS d;

SELECT 2147483647 AS i, -2147483648 AS j, 32767 AS k;

SELECT id, qty * qty AS sq FROM items WHERE qty < 1000;

SELECT id, CAST(qty AS BIGINT) * 3000000000 AS b FROM items;

SELECT id, price / 3 * 3 AS back FROM items;
