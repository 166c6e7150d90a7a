-- Projection: *, column lists, aliases, qualified and quoted names, constants, DISTINCT,
-- SELECT without FROM. Tables: items (live rows of a history over three generations and the
-- MemTable), tiny (8 hand-made rows), empty_t (never written), gone (every row deleted).

SELECT 1 + 1;

SELECT 1 AS one, 'two' AS two, 3.5 AS three, true AS t, NULL AS n;

SELECT 'multi-byte: Ünïcødé 日本語 🎉' AS s, '' AS empty, 'it''s' AS quoted;

SELECT * FROM items;

SELECT * FROM tiny;

SELECT id, name FROM items;

SELECT name, id FROM tiny;

SELECT updated, created, active, year, qty, price, category, name, id FROM items;

SELECT id AS key, price AS cost FROM items;

SELECT id, id AS again, qty AS id2 FROM tiny;

SELECT items.id, items.name FROM items WHERE id < 20;

SELECT t.id, t.qty FROM tiny AS t;

SELECT t.id FROM tiny t WHERE t.qty > 0;

SELECT "name", "qty" FROM tiny;

SELECT "id" AS "Mixed Case Alias" FROM tiny;

SELECT id, 'const' AS c, 42 AS n, NULL AS nothing FROM tiny;

SELECT price * 2 AS double_price, qty FROM tiny WHERE id <> 5;

SELECT DISTINCT category FROM items;

SELECT DISTINCT category, active FROM items;

SELECT DISTINCT year % 4 AS r FROM items;

SELECT id FROM items WHERE false;

SELECT id FROM items WHERE true AND id < 10;

SELECT count(*) AS n FROM items;
