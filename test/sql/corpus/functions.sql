-- Scalar functions: abs, round, ceil/ceiling, floor, lower, upper, length, substr, trim/ltrim/
-- rtrim, concat and ||, replace, extract / date_part; on NULLs, empty strings and multi-byte text.

SELECT id, abs(price) AS a, abs(qty) AS b, abs(year - 2020) AS c FROM items;

SELECT abs(-5) AS a, abs(-2.5) AS b, abs(0) AS c, abs(CAST(-3 AS BIGINT)) AS d;

SELECT id, abs(price) FROM tiny;

SELECT id, round(price) AS r0, round(price, 1) AS r1, round(price, 2) AS r2 FROM items;

SELECT id, ceil(price) AS c, floor(price) AS f, ceiling(price) AS c2 FROM items;

SELECT ceil(-0.5) AS a, floor(-0.5) AS b, round(-0.4) AS c, ceil(2) AS d, floor(2) AS e, round(7) AS f;

SELECT id, floor(price * qty) AS f FROM items;

SELECT id, lower(name) AS l, upper(name) AS u FROM items;

SELECT id, lower(name) AS l, upper(name) AS u FROM tiny;

SELECT id, length(name) AS n FROM items;

SELECT id, length(name) AS n FROM tiny;

SELECT length('') AS a, length('日本語') AS b, length('🎉') AS c, length('  x  ') AS d;

SELECT id, substr(name, 2) AS a, substr(name, 1, 3) AS b, substr(name, 3, 2) AS c FROM items;

SELECT substr('hello', 2, 100) AS a, substr('hello', 6) AS b, substr('日本語', 2, 1) AS c, substr('🎉 party', 1, 1) AS d, substr('x🎉y', 3) AS e;

SELECT id, substr(name, 2, 3) AS s FROM tiny;

SELECT id, trim(name) AS t, ltrim(name) AS l, rtrim(name) AS r FROM items;

SELECT id, trim(name) = name AS same FROM items WHERE name IS NOT NULL;

SELECT trim('  a b  ') AS a, ltrim('  a ') AS b, rtrim(' a  ') AS c, trim('') AS d;

SELECT id, concat(name, '-', category) AS c, name || '-' || category AS p FROM items;

SELECT id, concat(name, qty) AS a, concat('id=', id) AS b, concat(NULL, name, NULL) AS c FROM tiny;

SELECT id, name || '#' || CAST(id AS TEXT) AS a FROM tiny;

SELECT 'a' || 'b' || 'c' AS a, concat('x', NULL, 'y') AS b, 'x' || NULL AS c;

SELECT id, replace(name, 'i', 'I') AS a, replace(name, 'dget', '') AS b FROM items;

SELECT replace('aaa', 'a', 'bb') AS a, replace('日本語', '本', 'X') AS b, replace('x', 'y', 'z') AS c;

SELECT id, lower(name) = lower('WIDGET') AS w FROM items;

SELECT id, extract(year FROM created) AS y, extract(month FROM created) AS m, extract(day FROM created) AS d FROM items;

SELECT id, date_part('year', updated) AS y, date_part('hour', updated) AS h, date_part('minute', updated) AS mi FROM items;

SELECT id, extract(dow FROM created) AS dow, extract(doy FROM created) AS doy, extract(quarter FROM created) AS q FROM items;

SELECT id, extract(epoch FROM updated) - 1577836800 AS since_2020 FROM items;

-- PostgreSQL's second includes the fraction; DuckDB's is whole seconds, its microsecond part counts from the minute.
-- duckdb: SELECT id, extract(microsecond FROM updated) / 1000000.0 AS s FROM items
SELECT id, extract(second FROM updated) AS s FROM items;

SELECT id, extract(year FROM updated) AS y, extract(month FROM updated) AS m, extract(hour FROM updated) AS h FROM tiny;

SELECT id, extract(epoch FROM created) AS e FROM tiny;

SELECT extract(year FROM DATE '2024-02-29') AS y, extract(dow FROM DATE '2024-02-29') AS dow, extract(doy FROM DATE '2024-12-31') AS doy;

SELECT date_part('month', created) AS m FROM empty_t;

SELECT id, upper(substr(trim(name), 1, 2)) || lower(replace(coalesce(category, 'none'), 'a', '4')) AS mix FROM items;

SELECT id, abs(floor(price)) + length(coalesce(name, '')) AS n FROM items;
