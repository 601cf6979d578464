// ANTLR4 grammar of the Inmanta modelling language (.cf files), language spec §1-§2.
// The lexer reproduces the reference's first-match token discipline where it differs from ANTLR's
// longest-match rule (e.g. `-` followed by digits is part of a number, `-` inside identifiers, REGEX only
// after `matching`). Statements are juxtaposed: there are no separators. Expression precedence follows the
// reference table (§2.9): `in` binds tightest, then prefix `not`, `**` (left-assoc), `* / %`, `+ -`,
// comparisons, `and`, `or`, and the conditional `?:` loosest (right-nested). Postfix operations (calls,
// attribute access, lookups) apply only to names. Targeted errors (§2.10) are detected by the AST builder,
// so several rules accept a little more than the language and the builder reports the precise error.
grammar Inmanta;

main : MLS? topStmt* EOF ;

topStmt
  : entityDef
  | implementDef
  | implementationDef
  | relation
  | typedefDef
  | indexDef
  | importStmt
  | statement
  ;

statement
  : forStmt
  | ifStmt
  | assign
  | expression
  ;

importStmt : 'import' nsRef ('as' anyId)? ;

// ---- entities ----
entityDef : 'entity' name ('extends' parentRef (',' parentRef)*)? ':' MLS? attr* 'end' ;
parentRef : (anyId '::')* name ;

attr
  : 'dict' '?'? name ('=' (mapDef | 'null' | 'undef'))?               # dictAttr
  | attrType name ('=' (constant | constantList | 'undef'))?          # typedAttr
  ;
attrType : nsRef ('[' ']')? '?'? ;

// ---- implementations ----
implementationDef : 'implementation' name 'for' classRef ':' MLS? statement* 'end' ;
implementDef : 'implement' classRef 'using' implRef (',' implRef)* ('when' expression)? MLS? ;
implRef : nsRef | 'parents' ;

// ---- relations ----
relation : relationEnd (REL | annotations) relationTarget MLS? ;
relationEnd : classRef '.' anyId multi ;
relationTarget : classRef ('.' anyId multi)? ;
annotations : annotation (',' annotation)* ;
annotation : expression ;
multi
  : '[' INT ']'
  | '[' INT ':' INT? ']'
  | '[' ':' INT ']'
  ;

// ---- typedef, index ----
typedefDef
  : 'typedef' name 'as' nsRef 'matching' expression MLS?     # typedefExpr
  | 'typedef' name 'as' nsRef REGEX MLS?                     # typedefRegex
  | 'typedef' CID 'as' constructor MLS?                       # typedefCtor
  ;
indexDef : 'index' classRef '(' anyId (',' anyId)* ')' ;

// ---- statements ----
forStmt : 'for' anyId 'in' expression ':' statement* 'end' ;
ifStmt : 'if' ifBody 'end' ;
ifBody : expression ':' statement* ('elif' ifBody | 'else' ':' statement*)? ;
assign : varRef (op='=' | op=PEQ) expression ;

// ---- expressions ----
expression
  : primary                                                        # primaryExpr
  | expression notKw=K_NOT? K_IN expression                        # inExpr
  | 'not' expression                                               # notExpr
  | expression '**' expression                                     # powExpr
  | expression op=('*' | '/' | '%') expression                     # mulExpr
  | expression op=('+' | '-') expression                           # addExpr
  | expression CMP_OP expression                                   # cmpExpr
  | expression 'and' expression                                    # andExpr
  | expression 'or' expression                                     # orExpr
  | <assoc=right> expression '?' expression ':' expression         # condExpr
  ;

primary
  : '(' expression ')'                                             # parenPrimary
  | constant                                                       # constPrimary
  | listComprehension                                              # comprehensionPrimary
  | listDef                                                        # listPrimary
  | mapDef                                                         # mapPrimary
  | constructor                                                    # constructorPrimary
  | functionCall                                                   # callPrimary
  | indexLookup                                                    # indexLookupPrimary
  | mapLookup 'is' 'defined'                                       # mapIsDefinedPrimary
  | mapLookup                                                      # mapLookupPrimary
  | varRef 'is' 'defined'                                          # isDefinedPrimary
  | varRef                                                         # varPrimary
  ;

constant
  : INT | FLOAT | 'null' | REGEX | 'true' | 'false' | STRING | FSTRING | RSTRING | MLS ;
constantList : '[' (constant (',' constant)* ','?)? ']' ;

functionCall : varRef '(' (arg (',' arg)* ','?)? ')' ;
arg
  : anyId '=' expression                                           # kwArg
  | '**' expression                                                # spreadArg
  | expression                                                     # posArg
  ;
constructor : classRef '(' (kwarg (',' kwarg)* ','?)? ')' ;
kwarg
  : anyId '=' expression                                           # kwKwarg
  | '**' expression                                                # spreadKwarg
  ;
listDef : '[' (expression (',' expression)* ','?)? ']' ;
listComprehension : '[' expression compFor+ compIf* ']' ;
compFor : 'for' anyId 'in' expression ;
compIf : 'if' expression ;
mapDef : '{' (dictKey ':' expression (',' dictKey ':' expression)* ','?)? '}' ;
dictKey : STRING | RSTRING | MLS | FSTRING ;
mapLookup : varRef ('[' expression ']')+ ;
indexLookup
  : classRef '[' kwarg (',' kwarg)* ','? ']'                        # typeIndexLookup
  | varRef '.' anyId '[' kwarg (',' kwarg)* ','? ']'                # shortIndexLookup
  ;

varRef : nsRef ('.' anyIdOrCid)* ;
nsRef : anyId ('::' anyId)* ;
classRef : (anyId '::')* CID ;
anyId : ID | keywordAsId ;
anyIdOrCid : ID | CID | keywordAsId ;
name : ID | CID | keywordAsId ;
// Keywords accepted where a name is expected, so the builder can report "X is a reserved keyword".
keywordAsId : 'index' | 'entity' | 'typedef' | 'implementation' | 'implement' | 'import'
            | 'extends' | 'undef' | 'parents' ;

// ---------------------------------------------------------------- lexer
REGEX : 'matching' [ \t\r\n]+ '/' (~[/\\\n] | '\\' .)+ '/' ;
FSTRING : 'f' ('"' (~["\\\n] | '\\' .)* '"' | '\'' (~['\\\n] | '\\' .)* '\'') ;
RSTRING : 'r' ('"' (~["\\\n] | '\\' .)* '"' | '\'' (~['\\\n] | '\\' .)* '\'') ;

K_TYPEDEF : 'typedef' ; K_AS : 'as' ; K_ENTITY : 'entity' ; K_EXTENDS : 'extends' ; K_END : 'end' ; K_IN : 'in' ;
K_IMPLEMENTATION : 'implementation' ; K_FOR : 'for' ; K_MATCHING : 'matching' ; K_INDEX : 'index' ;
K_IMPLEMENT : 'implement' ; K_USING : 'using' ; K_WHEN : 'when' ; K_AND : 'and' ; K_OR : 'or' ; K_NOT : 'not' ;
K_TRUE : 'true' ; K_FALSE : 'false' ; K_IMPORT : 'import' ; K_IS : 'is' ; K_DEFINED : 'defined' ; K_DICT : 'dict' ;
K_NULL : 'null' ; K_UNDEF : 'undef' ; K_PARENTS : 'parents' ; K_IF : 'if' ; K_ELSE : 'else' ; K_ELIF : 'elif' ;

ID : [a-z_] [a-zA-Z_0-9-]* ;
CID : [A-Z] [a-zA-Z_0-9-]* ;
SEP : '::' ;
REL : '--' | '->' | '<-' ;
CMP_OP : '!=' | '==' | '>=' | '<=' | '<' | '>' ;
PEQ : '+=' ;
COMMENT : '#' ~[\n]* -> skip ;
MLS : '"""' .*? '"""' ;
FLOAT : '-'? [0-9]* '.' [0-9]+ ;
INT : '-'? [0-9]+ ;
STRING : '"' (~["\\\n] | '\\' .)* '"' | '\'' (~['\\\n] | '\\' .)* '\'' ;
PLUS : '+' ; MINUS : '-' ; DIV : '/' ; DSTAR : '**' ; STAR : '*' ; PERCENT : '%' ;
COLON : ':' ; LBRACK : '[' ; RBRACK : ']' ; LPAREN : '(' ; RPAREN : ')' ; EQ : '=' ; COMMA : ',' ;
DOT : '.' ; LBRACE : '{' ; RBRACE : '}' ; QMARK : '?' ;
WS : [ \t\r\n]+ -> skip ;
ILLEGAL : . ;
