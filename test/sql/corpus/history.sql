-- Generations, upserts and deletes: only the newest version of a key counts, deleted keys never
-- come back (unless put again). Superseded and deleted versions carry marker values (category
-- 'zombie' / 'ghost', names 'superseded …' / 'deleted …', price > 1e6, qty 999999, year 1999,
-- created 2016-04-06, updated 2019-12-31 23:59:59.999999) that no live row has, so a filter
-- that would match an old version must come back empty. See corpus-fixture.ts for the history.

SELECT count(*) FROM items;

SELECT count(*) AS n, count(DISTINCT id) AS d, min(id) AS lo, max(id) AS hi, sum(id) AS s FROM items;

SELECT id, count(*) AS n FROM items GROUP BY id HAVING count(*) > 1;

SELECT count(*) AS n FROM items WHERE category IN ('zombie', 'ghost');

SELECT id FROM items WHERE category = 'zombie';

SELECT id FROM items WHERE name LIKE 'superseded%' OR name LIKE 'deleted%';

SELECT id FROM items WHERE price > 999999;

SELECT id FROM items WHERE qty = 999999;

SELECT id FROM items WHERE year = 1999;

SELECT id FROM items WHERE created < DATE '2019-01-01';

SELECT id FROM items WHERE updated < TIMESTAMP '2020-01-01 00:00:00';

-- ordered
SELECT * FROM items WHERE id <= 20 ORDER BY id;

-- ordered
SELECT * FROM items WHERE id BETWEEN 21 AND 100 ORDER BY id;

-- ordered
SELECT id FROM items WHERE id BETWEEN 101 AND 150 ORDER BY id;

-- ordered
SELECT * FROM items WHERE id BETWEEN 101 AND 106 ORDER BY id;

-- ordered
SELECT * FROM items WHERE id BETWEEN 500 AND 560 ORDER BY id;

-- ordered
SELECT id FROM items WHERE id BETWEEN 695 AND 725 ORDER BY id;

-- ordered
SELECT * FROM items WHERE id BETWEEN 1001 AND 1050 ORDER BY id;

SELECT id FROM items WHERE id BETWEEN 2001 AND 2020;

-- ordered
SELECT * FROM items WHERE id BETWEEN 2495 AND 2525 ORDER BY id;

-- ordered
SELECT id FROM items WHERE id BETWEEN 2598 AND 2607 ORDER BY id;

-- ordered
SELECT * FROM items WHERE id BETWEEN 2995 AND 3020 ORDER BY id;

SELECT * FROM items WHERE id = 1999;

SELECT * FROM items WHERE id IN (1, 20, 21, 100, 101, 106, 150, 500, 700, 1001, 2001, 2500, 2600, 2999, 3001, 3011, 99999);

SELECT count(*) AS n FROM items WHERE id = 99999;

SELECT category, count(*) AS n, sum(qty) AS q, min(price) AS lo, max(price) AS hi FROM items WHERE id <= 150 OR id BETWEEN 500 AND 720 GROUP BY category;

SELECT year, max(qty) AS q, min(created) AS c FROM items GROUP BY year;

-- ordered
SELECT id, price FROM items ORDER BY price DESC NULLS LAST, id LIMIT 5;

-- ordered
SELECT id, updated FROM items ORDER BY updated NULLS LAST, id LIMIT 5;

-- ordered
SELECT id, created FROM items WHERE created IS NOT NULL ORDER BY created, id LIMIT 5;

SELECT max(name) AS m FROM items WHERE name LIKE 's%' OR name LIKE 'd%';

SELECT count(*) AS n FROM items WHERE active;

SELECT count(*) AS n, sum(qty) AS q FROM items WHERE id % 10 = 0;

SELECT count(*) AS n FROM tiny;

-- ordered
SELECT id FROM tiny ORDER BY id;

SELECT count(*) AS n FROM tiny WHERE category = 'ghost' OR id > 8;
