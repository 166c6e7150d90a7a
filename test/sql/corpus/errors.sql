-- Errors (PostgreSQL's rules): Quiver must throw an error of the given kind ('invalid' unless
-- named) whose message contains the text after ':' (case-insensitive). DuckDB is not consulted;
-- it accepts several of these (1 / 0 is NULL there, 'name = 5' casts).

-- error: division by zero
SELECT 1 / 0;

-- error: division by zero
SELECT id, qty / 0 FROM items;

-- error: division by zero
SELECT id, price / 0 FROM items;

-- error: division by zero
SELECT id % 0 FROM items;

-- error: division by zero
SELECT count(*) FROM items WHERE 100 / (qty - qty) > 1;

-- error: division by zero
SELECT sum(qty) / 0 FROM items;

-- error: division by zero
SELECT category, sum(qty) / (count(*) - count(*)) FROM items GROUP BY category;

-- error: out of range
SELECT 2147483647::int + 1;

-- error: out of range
SELECT 2147483647 + 1;

-- error: out of range
SELECT 9223372036854775807 + 1;

-- error: out of range
SELECT -2147483647::int - 2;

-- error: out of range
SELECT year * year FROM items;

-- error: out of range
SELECT id, qty * 2 FROM tiny;

-- error: out of range
SELECT id, -qty FROM tiny;

-- error: out of range
SELECT abs(qty) FROM tiny;

-- error: out of range
SELECT CAST(price AS INT) FROM tiny;

-- error: out of range
SELECT CAST(qty * 100 AS SMALLINT) FROM items;

-- error: out of range
SELECT id * 9223372036854775807 FROM items;

-- error: out of range
SELECT CAST(3000000000 AS INT);

-- error: nope
SELECT nope FROM items;

-- error: nope
SELECT id FROM items WHERE nope > 1;

-- error: nope
SELECT id FROM items ORDER BY nope;

-- error: nope
SELECT nope, count(*) FROM items GROUP BY nope;

-- error: nope
SELECT nope FROM empty_t;

-- error: nope
SELECT items.nope FROM items;

-- error not_found: nope
SELECT * FROM nope;

-- error not_found: missing_table
SELECT count(*) FROM missing_table WHERE id = 1;

-- error: type mismatch
SELECT id FROM items WHERE name = 5;

-- error: type mismatch
SELECT id FROM items WHERE name > 5;

-- error: type mismatch
SELECT name + 1 FROM items;

-- error: type mismatch
SELECT id FROM items WHERE active = 1;

-- error: type mismatch
SELECT id FROM items WHERE created = 5;

-- error: type mismatch
SELECT id FROM items WHERE name LIKE 5;

-- error: abc
SELECT id FROM items WHERE qty = 'abc';

-- error: boolean
SELECT id FROM items WHERE qty;

-- error: boolean
SELECT id FROM items WHERE name AND active;

-- error: syntax error
SELEC id FROM items;

-- error: syntax error
SELECT id FROM items WHERE;

-- error: column 11
SELECT id,, name FROM items;

-- error: syntax error
SELECT (1 + 2;

-- error: line 2
SELECT id,
  name name2 name3
FROM items;

-- error: unterminated
SELECT 'abc FROM items;

-- error: abs
SELECT abs(1, 2);

-- error: abs
SELECT abs() FROM items;

-- error: substr
SELECT substr(name) FROM items;

-- error: lower
SELECT lower(name, 1) FROM items;

-- error: round
SELECT round(price, 1, 2) FROM items;

-- error: frobnicate
SELECT frobnicate(id) FROM items;

-- error: sum
SELECT sum(name) FROM items;

-- error: avg
SELECT avg(active) FROM items;

-- error: aggregate
SELECT id FROM items WHERE count(*) > 1;

-- error: aggregate
SELECT sum(count(*)) FROM items;

-- error: group by
SELECT name, count(*) FROM items GROUP BY category;

-- error: group by
SELECT id, count(*) FROM items;

-- error: group by
SELECT category, count(*) FROM items GROUP BY 5;

-- error: order by
SELECT id, name FROM items ORDER BY 3;

-- error: limit
SELECT id FROM items ORDER BY id LIMIT -1;

-- error: abc
SELECT CAST('abc' AS INT);

-- error: 2021-13-45
SELECT CAST('2021-13-45' AS DATE);

-- A typed text branch: PostgreSQL would resolve an untyped literal 'a' to integer and fail on its input instead.
-- error: case
SELECT CASE WHEN qty > 1 THEN name ELSE 1 END FROM items;

-- error: "a"
SELECT CASE WHEN qty > 1 THEN 'a' ELSE 1 END FROM items;

-- error: coalesce
SELECT coalesce(name, 1) FROM items;
