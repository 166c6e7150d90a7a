-- WHERE: comparisons on every type, IN, BETWEEN, LIKE / ILIKE, boolean columns, combinations.

SELECT id FROM items WHERE qty > 250;

SELECT id, price FROM items WHERE price < 0;

SELECT id FROM items WHERE price = 0;

SELECT id FROM items WHERE price <> 0;

SELECT id FROM items WHERE price != 0;

SELECT id FROM items WHERE qty >= 100 AND qty <= 110;

SELECT id FROM items WHERE category = 'alpha' AND year = 2020;

SELECT id FROM items WHERE category = 'alpha' OR category = 'beta';

SELECT id FROM items WHERE year IN (2016, 2018, 2020);

SELECT id FROM items WHERE category IN ('alpha', 'gamma');

SELECT id FROM items WHERE category NOT IN ('alpha', 'gamma');

SELECT id FROM items WHERE id IN (5, 50, 500, 5000);

SELECT id FROM items WHERE qty IN (1, 2, 3, NULL);

SELECT count(*) AS n FROM items WHERE qty NOT IN (1, 2, NULL);

SELECT id FROM items WHERE price BETWEEN 10 AND 20;

SELECT id FROM items WHERE price NOT BETWEEN -10 AND 900;

SELECT id FROM items WHERE qty BETWEEN 400 AND 300;

SELECT id FROM items WHERE created BETWEEN DATE '2021-01-01' AND DATE '2021-03-31';

SELECT id FROM items WHERE created >= '2024-06-01';

SELECT id FROM items WHERE created = DATE '2022-02-02';

SELECT id FROM items WHERE updated < TIMESTAMP '2020-03-01 00:00:00';

SELECT id FROM items WHERE updated >= '2024-12-01 12:00:00';

SELECT id FROM items WHERE updated > created;

SELECT id FROM items WHERE name = 'Widget';

SELECT id FROM items WHERE name = '';

SELECT id FROM items WHERE name = '日本語';

SELECT id FROM items WHERE name = '  padded  ';

SELECT id, name FROM items WHERE name > 'x';

SELECT id, name FROM items WHERE name < 'B';

SELECT id, name FROM items WHERE name >= 'ＷＩＤＧＥＴ';

SELECT id FROM items WHERE name LIKE 'Wid%';

SELECT id FROM items WHERE name LIKE '%et';

SELECT id FROM items WHERE name LIKE '_og';

SELECT id FROM items WHERE name LIKE '%';

SELECT id FROM items WHERE name NOT LIKE '%o%';

SELECT id FROM items WHERE name ILIKE 'widget';

SELECT id FROM items WHERE name ILIKE '%ÜNÏ%';

SELECT id FROM items WHERE name NOT ILIKE '%GET%';

SELECT id FROM items WHERE name LIKE '日%';

SELECT id FROM items WHERE name LIKE '_本語';

SELECT id FROM items WHERE name LIKE '%🎉';

SELECT id FROM items WHERE name LIKE '_ party';

-- PostgreSQL's LIKE escapes with a backslash by default; DuckDB's needs ESCAPE.
-- duckdb: SELECT id FROM items WHERE name LIKE '100\% %' ESCAPE '\'
SELECT id FROM items WHERE name LIKE '100\% %';

-- duckdb: SELECT id FROM items WHERE name LIKE 'under\_%' ESCAPE '\'
SELECT id FROM items WHERE name LIKE 'under\_%';

SELECT id FROM items WHERE name LIKE 'under!_score' ESCAPE '!';

SELECT id FROM items WHERE name LIKE 'under_score';

-- duckdb: SELECT id FROM tiny WHERE name LIKE 'a\\b' ESCAPE '\'
SELECT id FROM tiny WHERE name LIKE 'a\\b';

SELECT id FROM items WHERE name LIKE '%''%';

SELECT id FROM items WHERE active;

SELECT id FROM items WHERE NOT active;

SELECT id FROM items WHERE active = false;

SELECT id FROM items WHERE active <> true;

SELECT id FROM items WHERE name IS NOT NULL AND qty IS NULL;

SELECT id FROM items WHERE id = 42;

SELECT id FROM items WHERE id < 0;

SELECT id FROM items WHERE qty * 2 > price;

SELECT id FROM items WHERE year = 2020.0;

SELECT id FROM items WHERE price > qty;

SELECT id FROM items WHERE qty = year - 1900;

SELECT id FROM items WHERE (price > 100 OR qty < 10) AND NOT (category = 'beta');

SELECT id FROM items WHERE price > 100 OR qty < 10 AND category = 'beta';

SELECT id FROM items WHERE lower(name) = 'widget' AND length(name) = 6;

SELECT id FROM items WHERE 1 = 1 AND id % 97 = 0;
