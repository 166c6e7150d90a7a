-- ORDER BY (multi-key, ASC/DESC, NULLS FIRST/LAST, alias, ordinal, expression, aggregate),
-- LIMIT / OFFSET, top-k. Default NULL order is PostgreSQL's: last ascending, first descending.

-- ordered
SELECT id, name FROM items ORDER BY id;

-- ordered
SELECT id FROM items ORDER BY id DESC LIMIT 10;

-- ordered
SELECT id, price FROM items ORDER BY price, id;

-- ordered
SELECT id, price FROM items ORDER BY price DESC, id;

-- ordered
SELECT id, price FROM items ORDER BY price NULLS FIRST, id;

-- ordered
SELECT id, price FROM items ORDER BY price DESC NULLS LAST, id LIMIT 50;

-- ordered
SELECT id, price FROM items ORDER BY price ASC NULLS LAST, id DESC LIMIT 50;

-- ordered
SELECT id, name FROM items ORDER BY name, id;

-- ordered
SELECT id, name FROM items ORDER BY name DESC, id DESC LIMIT 100;

-- ordered
SELECT name, id FROM items ORDER BY name NULLS FIRST, id LIMIT 400;

-- ordered
SELECT id, category, year FROM items ORDER BY category, year DESC, id;

-- ordered
SELECT id, active FROM items ORDER BY active, id;

-- ordered
SELECT id, active FROM items ORDER BY active DESC, id LIMIT 300;

-- ordered
SELECT id, created, updated FROM items ORDER BY created DESC, updated, id LIMIT 40;

-- ordered
SELECT id, updated FROM items ORDER BY updated, id LIMIT 40;

-- ordered
SELECT id, price * qty AS total FROM items ORDER BY total DESC, id LIMIT 20;

-- ordered
SELECT id, qty FROM items ORDER BY 2, 1 LIMIT 30;

-- ordered
SELECT id, qty FROM items ORDER BY 2 DESC, 1 DESC LIMIT 30;

-- ordered
SELECT id, name FROM items ORDER BY lower(name), id LIMIT 30;

-- ordered
SELECT id FROM items ORDER BY abs(price) DESC, id LIMIT 15;

-- ordered
SELECT id FROM items ORDER BY price, id LIMIT 10 OFFSET 5;

-- ordered
SELECT id FROM items ORDER BY id LIMIT 5 OFFSET 3000;

-- ordered
SELECT id FROM items ORDER BY id LIMIT 0;

-- ordered
SELECT id FROM items ORDER BY id LIMIT 10 OFFSET 100000;

-- ordered
SELECT id FROM items ORDER BY id OFFSET 3100;

-- count-only
SELECT id FROM items LIMIT 25;

-- count-only
SELECT * FROM items WHERE category = 'beta' LIMIT 7;

-- count-only
SELECT name FROM items LIMIT 5 OFFSET 10;

-- ordered-on: category
SELECT category, id FROM items WHERE id < 200 ORDER BY category;

-- ordered-on: year
SELECT year, name FROM items ORDER BY year DESC;

-- ordered-on: active, category
SELECT active, category, id FROM items ORDER BY active NULLS FIRST, category DESC;

-- ordered
SELECT category, count(*) AS n FROM items GROUP BY category ORDER BY n DESC, category;

-- ordered
SELECT year, sum(qty) AS q FROM items GROUP BY year ORDER BY year;

-- ordered
SELECT year, avg(price) AS a FROM items GROUP BY year ORDER BY a DESC LIMIT 3;

-- ordered
SELECT category, count(*) FROM items GROUP BY category ORDER BY count(*) DESC, category;

-- ordered
SELECT category, year, count(*) AS n FROM items GROUP BY category, year ORDER BY category NULLS FIRST, year DESC;

-- ordered
SELECT id, name FROM items WHERE name IS NOT NULL ORDER BY name DESC, id LIMIT 5;

-- ordered
SELECT id, price FROM items WHERE price IS NOT NULL ORDER BY price DESC, id LIMIT 1;

-- ordered
SELECT id, qty FROM tiny ORDER BY qty;

-- ordered
SELECT id, price FROM tiny ORDER BY price DESC;

-- ordered
SELECT id, created FROM tiny ORDER BY created NULLS FIRST;

-- ordered
SELECT id, updated FROM tiny ORDER BY updated DESC NULLS LAST;

-- ordered
SELECT id, name FROM tiny ORDER BY name;

-- ordered
SELECT id, year FROM tiny ORDER BY year DESC, id;

-- ordered
SELECT DISTINCT category FROM items ORDER BY category;

-- ordered
SELECT id, price FROM items WHERE category = 'gamma' ORDER BY price DESC NULLS LAST, id DESC LIMIT 12 OFFSET 3;

-- ordered
SELECT id, year FROM items ORDER BY year, id DESC LIMIT 25;

-- ordered
SELECT id, length(name) AS len FROM items WHERE name IS NOT NULL ORDER BY len DESC, id LIMIT 10;

-- ordered
SELECT id, CASE WHEN active THEN 0 ELSE 1 END AS k FROM items ORDER BY k, id LIMIT 100;
