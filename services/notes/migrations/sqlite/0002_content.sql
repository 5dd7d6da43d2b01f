-- What a note holds and when to remind its owner: each a JSON document of its union
-- (`NoteContent`, `Reminder`), absent for notes that have none.
ALTER TABLE notes ADD COLUMN content TEXT;
ALTER TABLE notes ADD COLUMN reminder TEXT;
