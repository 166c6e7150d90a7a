-- Parameters $1, $2, … bound from JS values (number, bigint as "<digits>n", string, boolean, null).

-- params: [2020]
SELECT id FROM items WHERE year = $1;

-- params: ["alpha", 100]
SELECT id, qty FROM items WHERE category = $1 AND qty > $2;

-- params: [10.5]
SELECT id FROM items WHERE price < $1;

-- params: ["Wid%"]
SELECT id FROM items WHERE name LIKE $1;

-- params: [true]
SELECT count(*) AS n FROM items WHERE active = $1;

-- params: ["42n"]
SELECT * FROM items WHERE id = $1;

-- params: [null]
SELECT count(*) AS n FROM items WHERE qty = $1;

-- params: [2]
SELECT id, qty * $1 AS q FROM items WHERE id < 100;

-- params: ["日本語"]
SELECT id FROM items WHERE name = $1;

-- params: [100, 200]
SELECT id FROM items WHERE qty BETWEEN $1 AND $2;

-- params: ["beta", "gamma"]
SELECT category, count(*) AS n FROM items WHERE category IN ($1, $2) GROUP BY category;
