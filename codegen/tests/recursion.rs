//! A model that holds itself (a tree, a linked list) is boxed where nothing else gives the
//! recursion an indirection: `parent: Box<TreeNode>`, but `children: Vec<TreeNode>`.

const TODOS: &str = include_str!("fixtures/prelude/todos.toml");

#[test]
fn a_model_holding_itself_directly_is_boxed_and_through_a_list_is_not() {
    let spec = TODOS.replacen(
        "[models.Todo]",
        "[models.TreeNode]\ndescription = \"A node.\"\nfields.parent = { type = \"TreeNode\", optional = true, description = \"Its parent.\" }\n\
         fields.children = { type = \"TreeNode[]\", description = \"Its children.\" }\nfields.step = { type = \"Step\", optional = true, description = \"A step.\" }\n\n\
         [models.Step]\ndescription = \"A step back to the tree.\"\nfields.node = { type = \"TreeNode\", description = \"The node.\" }\n\n\
         [models.Todo]\nfields.tree = { type = \"TreeNode\", optional = true, description = \"Where it hangs.\" }",
        1,
    );
    let files = codegen::generate(&[("todos.toml", &spec)]).unwrap_or_else(|e| panic!("{e}"));
    let models =
        files.iter().find(|f| f.path.ends_with("models.rs")).unwrap().text.split_whitespace().collect::<String>();
    assert!(models.contains("pubparent:Option<Box<TreeNode>>"), "{models}");
    assert!(models.contains("pubchildren:Vec<TreeNode>"), "a list is its own indirection: {models}");
    assert!(models.contains("pubstep:Option<Box<Step>>"), "a cycle through another model: {models}");
    assert!(models.contains("pubnode:Box<TreeNode>"), "{models}");
    assert!(models.contains("pubtree:Option<TreeNode>"), "no cycle back to `Todo`: {models}");
}

#[test]
fn a_model_that_requires_itself_is_refused() {
    let spec = TODOS.replacen(
        "[models.Todo]",
        "[models.TreeNode]\ndescription = \"A node.\"\nfields.parent = { type = \"Branch\", description = \"Its branch.\" }\n\n\
         [models.Branch]\ndescription = \"A branch.\"\nfields.node = { type = \"TreeNode\", description = \"The node.\" }\n\n\
         [models.Todo]\nfields.tree = { type = \"TreeNode\", optional = true, description = \"Where it hangs.\" }",
        1,
    );
    let refused = codegen::load("todos.toml", &spec).expect_err("refused").to_string();
    assert!(
        refused.contains(
            "todos.toml: model `TreeNode` field `parent`: every `TreeNode` must hold another `TreeNode` through \
             required fields, so no value is finite; fix: make a field on the way optional or nullable"
        ),
        "{refused}"
    );
    let optional =
        spec.replace("fields.node = { type = \"TreeNode\",", "fields.node = { type = \"TreeNode\", optional = true,");
    codegen::load("todos.toml", &optional).unwrap_or_else(|e| panic!("an optional step ends it: {e}"));
}
