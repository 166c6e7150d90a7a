-- Empty inputs: empty_t (never written), gone (rows in a generation and the MemTable, all
-- deleted), and filters that match nothing. Aggregates without GROUP BY still return one row.

SELECT * FROM empty_t;

SELECT id, name FROM empty_t WHERE price > 0;

SELECT count(*) FROM empty_t;

SELECT count(*) AS n, count(name) AS c, sum(qty) AS s, avg(price) AS a, min(name) AS mn, max(created) AS mc, min(updated) AS mu, max(active) AS ma FROM empty_t;

SELECT count(DISTINCT category) AS n FROM empty_t;

SELECT category, count(*) AS n FROM empty_t GROUP BY category;

SELECT category, count(*) AS n FROM empty_t GROUP BY category HAVING count(*) > 0;

SELECT sum(price) AS s FROM empty_t HAVING count(*) = 0;

-- ordered
SELECT id FROM empty_t ORDER BY id LIMIT 10;

-- ordered
SELECT id, price FROM empty_t ORDER BY price DESC NULLS LAST LIMIT 10;

SELECT id + 1 AS a, upper(name) AS b, CASE WHEN active THEN 1 END AS c, CAST(created AS TEXT) AS d FROM empty_t;

SELECT DISTINCT name FROM empty_t;

SELECT * FROM empty_t WHERE id = 1;

SELECT min(id) AS lo, max(id) AS hi FROM empty_t;

SELECT count(*) AS n FROM empty_t WHERE qty / 0 > 1;

-- count-only
SELECT * FROM empty_t LIMIT 0;

SELECT * FROM gone;

SELECT count(*) AS n, sum(qty) AS s, max(name) AS m FROM gone;

SELECT category, count(*) AS n FROM gone GROUP BY category;

-- ordered
SELECT id FROM gone ORDER BY id LIMIT 5;

SELECT count(*) AS n FROM gone WHERE category = 'ghost';

SELECT id FROM gone WHERE id BETWEEN 1 AND 60;

-- count-only
SELECT * FROM items LIMIT 0;

SELECT id FROM items WHERE id > 1000000;

SELECT count(*) AS n, sum(price) AS s, avg(qty) AS a FROM items WHERE id > 1000000;

SELECT id FROM items WHERE name = 'no such name';

SELECT id FROM tiny WHERE qty > 2147483647;
