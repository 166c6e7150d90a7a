-- CASE (searched and simple, with and without ELSE, mixed result types, lazy branches) and
-- CAST / :: between every pair of types the engine supports.

SELECT id, CASE WHEN price > 100 THEN 'high' WHEN price > 0 THEN 'low' ELSE 'other' END AS band FROM items;

SELECT id, CASE WHEN price > 100 THEN 'high' END AS band FROM items;

SELECT id, CASE category WHEN 'alpha' THEN 1 WHEN 'beta' THEN 2 ELSE 0 END AS code FROM items;

SELECT id, CASE category WHEN NULL THEN 'null!' ELSE 'other' END AS c FROM tiny;

SELECT id, CASE WHEN active THEN qty ELSE -1 END AS q FROM items;

SELECT id, CASE WHEN qty > 100 THEN price ELSE qty END AS mixed FROM items;

SELECT id, CASE WHEN qty IS NULL THEN 'none' WHEN qty = 0 THEN 'zero' ELSE 'some' END AS q FROM items;

SELECT CASE WHEN 1 > 2 THEN 'a' ELSE 'b' END AS a, CASE 3 WHEN 1 THEN 'x' WHEN 3 THEN 'y' END AS b, CASE WHEN NULL THEN 1 ELSE 2 END AS c;

-- The THEN branch is not evaluated for rows where qty is 0 (no division by zero).
SELECT id, CASE WHEN qty > 0 THEN 100 / qty ELSE 0 END AS inv FROM tiny;

SELECT id, CASE WHEN price IS NULL THEN NULL ELSE price * 2 END AS p FROM tiny;

SELECT id, CASE year WHEN 2020 THEN created WHEN 2021 THEN DATE '2021-01-01' END AS d FROM items;

SELECT category, CASE WHEN count(*) > 700 THEN 'big' ELSE 'small' END AS size FROM items GROUP BY category;

SELECT id FROM items WHERE CASE WHEN category = 'alpha' THEN qty > 250 ELSE price < 0 END;

SELECT id, CAST(price AS INT) AS i, CAST(price AS BIGINT) AS b FROM items;

SELECT id, CAST(qty AS DOUBLE PRECISION) AS d, CAST(qty AS BIGINT) AS b, CAST(qty AS TEXT) AS t FROM items;

SELECT id, CAST(year AS TEXT) AS t, CAST(year AS INT) AS i, CAST(year AS BIGINT) AS b FROM items;

SELECT id, CAST(active AS TEXT) AS t, CAST(active AS INT) AS i FROM items;

SELECT id, CAST(created AS TEXT) AS t, CAST(created AS TIMESTAMP) AS ts FROM items;

SELECT id, CAST(updated AS DATE) AS d, CAST(updated AS TEXT) AS t FROM items;

SELECT id, CAST(updated AS TEXT) AS t, CAST(created AS TEXT) AS d FROM tiny;

SELECT id, CAST(name AS TEXT) AS n, CAST(id AS INT) AS i FROM tiny;

SELECT CAST('42' AS INT) AS a, CAST(' 42 ' AS INT) AS b, CAST('-7' AS BIGINT) AS c, CAST('3.25' AS DOUBLE PRECISION) AS d, CAST('2021-03-04' AS DATE) AS e, CAST('2021-03-04 05:06:07.5' AS TIMESTAMP) AS f;

SELECT CAST('true' AS BOOLEAN) AS a, CAST('f' AS BOOLEAN) AS b, CAST(1 AS BOOLEAN) AS c, CAST(0 AS BOOLEAN) AS d;

SELECT '12'::int + 1 AS a, 3::double precision / 2 AS b, 7::bigint / 2 AS c, 2.75::int AS d, (-2.75)::int AS e;

SELECT id, qty::text || '!' AS a, price::int AS b FROM tiny WHERE id <> 5;

SELECT id, CAST(price AS BIGINT) AS b FROM tiny;

SELECT id, CAST(qty AS SMALLINT) AS s FROM items;

SELECT CAST(NULL AS INT) AS a, CAST(NULL AS TEXT) AS b, CAST(NULL AS DATE) AS c, NULL::boolean AS d;

SELECT id, CAST(CAST(qty AS TEXT) AS INT) = qty AS round_trip FROM items;

SELECT id, CAST(price AS TEXT) AS t FROM items WHERE price <> floor(price);

SELECT id, CAST(price AS REAL) AS r FROM tiny;

SELECT id, CAST(price AS DOUBLE PRECISION) / 3 AS d FROM items WHERE qty > 400;

SELECT count(*) AS n FROM items WHERE CAST(created AS TEXT) LIKE '2021-%';

SELECT id FROM items WHERE CAST(updated AS DATE) = DATE '2023-03-03' OR CAST(year AS TEXT) = '2017';
