-- Aggregates: count(*), count(x), count(DISTINCT x), sum, avg, min, max on every type; GROUP BY
-- single / multiple / expressions / ordinals / NULL keys; HAVING; aggregates over no rows.

SELECT count(*) FROM items;

SELECT count(*) AS n, count(name) AS name, count(category) AS category, count(price) AS price, count(qty) AS qty, count(year) AS year, count(active) AS active, count(created) AS created, count(updated) AS updated FROM items;

SELECT count(DISTINCT name) AS a, count(DISTINCT category) AS b, count(DISTINCT year) AS c, count(DISTINCT active) AS d, count(DISTINCT created) AS e FROM items;

SELECT sum(qty) AS a, sum(price) AS b, sum(year) AS c, sum(id) AS d FROM items;

SELECT avg(qty) AS a, avg(price) AS b, avg(year) AS c, avg(id) AS d FROM items;

SELECT min(id) AS a, max(id) AS b, min(qty) AS c, max(qty) AS d, min(price) AS e, max(price) AS f, min(year) AS g, max(year) AS h FROM items;

SELECT min(name) AS a, max(name) AS b, min(category) AS c, max(category) AS d FROM items;

SELECT min(active) AS a, max(active) AS b FROM items;

SELECT min(created) AS a, max(created) AS b, min(updated) AS c, max(updated) AS d FROM items;

SELECT count(*) AS n, sum(qty) AS s, avg(qty) AS a, min(qty) AS lo, max(qty) AS hi, min(name) AS mn, max(name) AS mx FROM tiny;

SELECT sum(price) AS s, avg(price) AS a, min(updated) AS u, max(created) AS c FROM tiny;

SELECT count(1) AS a, count(id) AS b FROM items;

SELECT category, count(*) FROM items GROUP BY category;

SELECT category, active, count(*) AS n, sum(qty) AS q FROM items GROUP BY category, active;

SELECT year, count(*) AS n, avg(price) AS p, min(name) AS mn, max(updated) AS mu FROM items GROUP BY year;

SELECT name, count(*) AS n FROM items GROUP BY name;

SELECT lower(name) AS lname, count(*) AS n FROM items GROUP BY lower(name);

SELECT year % 3 AS bucket, count(*) AS n FROM items GROUP BY year % 3;

SELECT extract(year FROM created) AS y, count(*) AS n FROM items GROUP BY extract(year FROM created);

SELECT qty IS NULL AS missing, count(*) AS n FROM items GROUP BY qty IS NULL;

SELECT active, min(price) AS lo, max(price) AS hi, count(price) AS n FROM items GROUP BY active;

SELECT category, count(*) AS n FROM items GROUP BY 1;

SELECT category, year, count(*) AS n FROM items GROUP BY 1, 2;

SELECT name, category, count(*) AS n FROM items GROUP BY name, category;

SELECT category FROM items GROUP BY category;

SELECT year, count(DISTINCT category) AS n FROM items GROUP BY year;

SELECT category, min(created) AS first_day, max(created) AS last_day, min(updated) AS t0 FROM items GROUP BY category;

SELECT active, min(name) AS mn, max(name) AS mx, min(active) AS a FROM items GROUP BY active;

SELECT category, count(*) AS n FROM items GROUP BY category HAVING count(*) > 500;

SELECT category, sum(price) AS s FROM items GROUP BY category HAVING sum(price) > 0 AND category IS NOT NULL;

SELECT year, count(*) AS n FROM items GROUP BY year HAVING max(price) > 990;

SELECT active, count(*) AS n FROM items WHERE price > 0 GROUP BY active HAVING count(*) > 1;

SELECT category, count(*) AS n FROM items GROUP BY category HAVING false;

SELECT name, count(*) AS n FROM items GROUP BY name HAVING count(*) < 100 OR name IS NULL;

SELECT count(*) AS n FROM items HAVING count(*) > 0;

SELECT sum(qty) / count(qty) AS mean_int FROM items;

SELECT avg(qty) * 2 AS a, sum(price) / 2 AS b, count(*) + 1 AS c FROM items;

SELECT category, sum(qty) - min(qty) AS spread, max(price) - min(price) AS range FROM items GROUP BY category;

SELECT sum(price * qty) AS revenue, avg(price / 2) AS half FROM items;

SELECT sum(CAST(qty AS BIGINT)) AS a, sum(qty * 2) AS b FROM items;

SELECT count(*) AS n, sum(qty) AS s, avg(price) AS a, min(name) AS mn, max(created) AS mc FROM items WHERE id < 0;

SELECT category, count(*) AS n FROM items WHERE id < 0 GROUP BY category;

SELECT min(price) AS lo, max(price) AS hi, sum(price) AS s FROM items WHERE price IS NULL;

SELECT category, count(*) AS n, count(DISTINCT year) AS years, sum(CASE WHEN active THEN 1 ELSE 0 END) AS active_n FROM items GROUP BY category;

SELECT coalesce(category, '(none)') AS c, count(*) AS n FROM items GROUP BY coalesce(category, '(none)');

SELECT year, category, avg(qty) AS a FROM items WHERE year >= 2020 GROUP BY year, category HAVING avg(qty) > 240;
