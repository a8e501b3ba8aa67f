//! The words of each language's phrases (`super`'s tables), as the scan reads them:
//! lowercase, Latin letters without their accents, Han and kana runs of one token each.

use super::Set;

// ------------------------------------------------------------------------------- French

pub(super) const FR_IGNORE: Set = "ignore ignorez ignorer oublie oubliez oublier neglige \
    negligez abandonne abandonnez outrepasse outrepassez desobeis desobeissez transgresse \
    transgressez enfreins enfreignez contourne contournez";
pub(super) const FR_DET: Set = "toutes tous toute tout les la le l des de d du a aux au ces \
    ses";
pub(super) const FR_YOUR: Set = "tes vos ton ta votre";
pub(super) const FR_ORDERS: Set = "instructions instruction consignes consigne regles regle \
    directives directive indications ordres prompt prompts invite";
pub(super) const FR_EARLIER: Set = "precedentes precedents precedente precedent anterieures \
    anterieurs anterieure anterieur initiales initiaux initiale originales originaux originelles \
    dessus systeme precedemment auparavant";
pub(super) const FR_BETWEEN: Set = "que qu tu vous as avez a recues recu recus recue donnees \
    du de d ci t ont ete qui m";
pub(super) const FR_RULES: Set = "regles regle instructions consignes directives restrictions \
    limites limitations filtres politiques principes contraintes protocoles garde valeurs \
    programmation";
pub(super) const FR_EVADE: Set = "contourne contournez desactive desactivez supprime supprimez \
    enleve enlevez leve levez neutralise neutralisez evite evitez coupe coupez contourner \
    desactiver";
pub(super) const FR_SAFETY_THINGS: Set = "filtres filtre protections protection mesures \
    controles restrictions limites barrieres dispositifs garde garanties";
pub(super) const FR_SAFETY: Set = "securite moderation contenu ethique ethiques fous censure";
pub(super) const FR_REVEAL: Set = "affiche affichez revele revelez montre montrez repete \
    repetez donne donnez imprime imprimez divulgue divulguez partage partagez ecris ecrivez \
    recite recitez copie copiez dis dites devoile devoilez";
pub(super) const FR_ME: Set = "moi nous m mot pour exactement entierement";
pub(super) const FR_PROMPT: Set = "prompt instructions consignes message invite directives";
pub(super) const FR_PROMPT_KIND: Set = "systeme initial initiales initiaux cache caches \
    cachees secret secretes secrets original originales";
pub(super) const FR_TELL: Set = "dis dites mentionne mentionnez parle parlez informe informez \
    previens prevenez signale signalez revele revelez raconte racontez avertis avertissez dire \
    mentionner parler informer prevenir signaler reveler avertir alerter";
pub(super) const FR_USER: Set = "utilisateur utilisateurs utilisatrice user humain";
pub(super) const FR_SEND: Set = "envoie envoyez envoyer transmets transmettez transmettre \
    publie publiez poste postez televerse televersez exfiltre exfiltrez transfere transferez \
    colle collez uploade uploadez";
pub(super) const FR_SECRETS: Set = "passe secrets secret cles cle jetons jeton tokens token \
    identifiants conversation historique memoire environnement cookies echanges discussion";

// ------------------------------------------------------------------------------ Spanish

pub(super) const ES_IGNORE: Set = "ignora ignore ignoren ignorad ignorar olvida olvide olviden \
    olvidad olvidar omite omita omitan descarta descarte desestima desestime desatiende \
    desatienda desobedece desobedezca salta saltate";
pub(super) const ES_DET: Set = "todas todos toda todo las los la el estas esas de del a al \
    cualquier";
pub(super) const ES_YOUR: Set = "tus tu vuestras vuestros";
pub(super) const ES_ORDERS: Set = "instrucciones instruccion indicaciones indicacion reglas \
    regla directrices directriz directivas ordenes orden prompt prompts consignas normas norma \
    pautas";
pub(super) const ES_EARLIER: Set = "anteriores anterior previas previos previa precedentes \
    iniciales originales arriba sistema antes anteriormente";
pub(super) const ES_BETWEEN: Set = "que te se han dado dadas dados recibidas recibiste del de \
    dieron dio le ha mencionadas escritas";
/// "de ESLint" after the rules: another tool's rules, not the model's ("olvida las reglas
/// anteriores de ESLint"); "del sistema", "de tu desarrollador" are still the model's.
pub(super) const ES_OF: Set = "de del";
pub(super) const ES_NAMED: Set = "* !la !las !el !los !lo !tu !tus !su !sus !sistema !este \
    !esta !estos !estas !esto !usuario* !desarrollador* !operador* !mi !mis !nuestr* !vuestr* \
    !tod* !cualquier* !openai !anthropic !ahora !antes !arriba !modelo !asistente !ia";
pub(super) const ES_RULES: Set = "reglas instrucciones directrices restricciones limites \
    limitaciones filtros politicas principios normas pautas salvaguardas protocolos valores \
    programacion";
pub(super) const ES_EVADE: Set = "evita evade elude desactiva desactive quita quite elimina \
    elimine salta saltate burla esquiva apaga apague deshabilita evadir eludir desactivar";
pub(super) const ES_SAFETY_THINGS: Set = "filtros filtro protecciones medidas controles \
    restricciones limites barreras salvaguardas";
pub(super) const ES_SAFETY: Set = "seguridad moderacion contenido eticos etica censura";
pub(super) const ES_REVEAL: Set = "muestra muestrame muestre revela revelame revele repite \
    repiteme imprime dame da comparte escribe escribeme copia dime di ensename expon filtra";
pub(super) const ES_ME: Set = "me nos palabra por exactamente completo completas";
pub(super) const ES_PROMPT: Set = "prompt instrucciones mensaje indicaciones directrices";
pub(super) const ES_PROMPT_KIND: Set = "sistema iniciales inicial ocultas oculto secretas \
    secreto originales original";
pub(super) const ES_TELL: Set = "digas diga cuentes cuente menciones mencione informes informe \
    avises avise reveles revele comentes comente decir decirle contar contarle mencionar \
    informar avisar avisarle alertar";
pub(super) const ES_USER: Set = "usuario usuarios usuaria user humano";
pub(super) const ES_SEND: Set = "envia envie enviar manda mande mandar sube suba subir publica \
    publique transmite reenvia reenvie exfiltra pega pegue filtra";
pub(super) const ES_SECRETS: Set = "contrasenas contrasena claves clave secretos secreto \
    tokens token credenciales conversacion historial memoria entorno cookies chat";

// --------------------------------------------------------------------------- Portuguese

pub(super) const PT_IGNORE: Set = "ignore ignora ignorem ignorar esqueca esquece esquecam \
    esquecer desconsidere desconsidera desconsiderar descarte descarta despreze despreza \
    desobedeca desobedece pule omita omite";
pub(super) const PT_DET: Set = "todas todos toda as os a o essas estas das dos de quaisquer \
    qualquer";
pub(super) const PT_YOUR: Set = "suas seus tuas teus sua seu tua teu";
pub(super) const PT_ORDERS: Set = "instrucoes instrucao orientacoes orientacao regras regra \
    diretrizes diretriz diretivas ordens ordem prompt prompts indicacoes comandos normas";
pub(super) const PT_EARLIER: Set = "anteriores anterior previas previos acima iniciais \
    originais sistema antes anteriormente precedentes";
pub(super) const PT_BETWEEN: Set = "que te lhe voce recebeu foram dadas do de recebidas \
    passadas deram";
pub(super) const PT_RULES: Set = "regras instrucoes diretrizes restricoes limites limitacoes \
    filtros politicas principios normas salvaguardas protocolos valores programacao";
pub(super) const PT_EVADE: Set = "contorne contorna burle burla desative desativa desligue \
    desliga remova remove evite evita pule contornar burlar desativar";
pub(super) const PT_SAFETY_THINGS: Set = "filtros filtro protecoes medidas controles \
    restricoes limites barreiras salvaguardas travas";
pub(super) const PT_SAFETY: Set = "seguranca moderacao conteudo eticos etica censura";
pub(super) const PT_REVEAL: Set = "mostre mostra revele revela repita repete imprima imprime \
    de da compartilhe partilhe escreva copie diga diz exiba exibe vaze";
pub(super) const PT_ME: Set = "me nos palavra por exatamente completo completas";
pub(super) const PT_PROMPT: Set = "prompt instrucoes mensagem orientacoes diretrizes";
pub(super) const PT_PROMPT_KIND: Set = "sistema iniciais inicial ocultas oculto secretas \
    secreto originais original";
pub(super) const PT_TELL: Set = "diga digas conte contes mencione menciones informe avise \
    revele comente dizer contar mencionar informar avisar alertar fale";
pub(super) const PT_USER: Set = "usuario usuarios utilizador utilizadores usuaria humano";
pub(super) const PT_SEND: Set = "envie envia enviar mande manda mandar suba sobe carregue \
    publique poste transmita encaminhe exfiltre cole";
pub(super) const PT_SECRETS: Set = "senhas senha chaves chave segredos segredo tokens token \
    credenciais conversa historico memoria ambiente cookies chat";

// ------------------------------------------------------------------------------ Italian

pub(super) const IT_IGNORE: Set = "ignora ignori ignorate ignorare dimentica dimentichi \
    dimenticate dimenticare trascura trascurate tralascia tralasciate scarta scartate \
    disobbedisci salta aggira";
pub(super) const IT_DET: Set = "tutte tutti tutto le gli i la il l queste delle degli di \
    qualsiasi";
pub(super) const IT_YOUR: Set = "tue tuoi tua tuo sue suoi vostre vostri";
pub(super) const IT_ORDERS: Set = "istruzioni istruzione indicazioni indicazione regole regola \
    direttive direttiva linee ordini prompt consegne comandi";
pub(super) const IT_EARLIER: Set = "precedenti precedente anteriori iniziali originali sopra \
    sistema prima precedentemente";
pub(super) const IT_BETWEEN: Set = "che ti hai sono state date ricevuto ricevute di del guida \
    fornite scritte";
pub(super) const IT_RULES: Set = "regole istruzioni linee direttive restrizioni limiti \
    limitazioni filtri politiche principi norme protocolli valori programmazione";
pub(super) const IT_EVADE: Set = "aggira aggirate disattiva disattivate rimuovi rimuovete \
    elimina evita scavalca spegni salta aggirare disattivare";
pub(super) const IT_SAFETY_THINGS: Set = "filtri filtro protezioni misure controlli \
    restrizioni limiti barriere salvaguardie";
pub(super) const IT_SAFETY: Set = "sicurezza moderazione contenuto etici etica censura";
pub(super) const IT_REVEAL: Set = "mostra mostrami mostrate rivela rivelami ripeti ripetimi \
    stampa dammi dai condividi scrivi scrivimi copia dimmi di esponi";
pub(super) const IT_ME: Set = "mi ci parola per esattamente completo completa";
pub(super) const IT_PROMPT: Set = "prompt istruzioni messaggio indicazioni direttive";
pub(super) const IT_PROMPT_KIND: Set = "sistema iniziali iniziale nascoste nascosto segrete \
    segreto originali originale";
pub(super) const IT_TELL: Set = "dire dirlo dirgli raccontare menzionare informare avvisare \
    avvertire rivelare parlarne segnalare dica informi avvisi";
pub(super) const IT_USER: Set = "utente utenti user umano";
pub(super) const IT_SEND: Set = "invia inviate inviare manda mandate mandare carica caricate \
    pubblica trasmetti inoltra esfiltra incolla";
pub(super) const IT_SECRETS: Set = "password chiavi chiave segreti segreto token credenziali \
    conversazione cronologia memoria ambiente cookie chat";

// ------------------------------------------------------------------------------- German

pub(super) const DE_IGNORE: Set = "ignoriere ignorier ignoriert ignorieren vergiss vergesst \
    vergessen missachte missachtet missachten verwirf verwerft verwerfen uberspringe ubergehe \
    umgehe umgehen setze";
pub(super) const DE_DET: Set = "alle allen aller die der den samtliche samtlichen jegliche \
    jeglichen diese dieser bitte sie du ihr einfach";
pub(super) const DE_YOUR: Set = "deine deinen deiner ihre ihren eure euren";
pub(super) const DE_EARLIER: Set = "vorherigen vorherige vorigen vorige bisherigen bisherige \
    fruheren fruhere vorangegangenen vorangehenden vorhergehenden obigen obige ursprunglichen \
    ursprungliche anfanglichen erhaltenen";
pub(super) const DE_ORDERS: Set = "anweisungen anweisung instruktionen regeln regel vorgaben \
    vorgabe richtlinien richtlinie befehle anordnungen prompts prompt direktiven \
    systemanweisungen systemprompt systemregeln systemvorgaben systemnachricht";
pub(super) const DE_RULES: Set = "regeln anweisungen richtlinien vorgaben einschrankungen \
    beschrankungen grenzen filter sicherheitsregeln sicherheitsrichtlinien schutzmassnahmen \
    sicherheitsvorkehrungen prinzipien werte programmierung inhaltsrichtlinien";
pub(super) const DE_EVADE: Set = "umgehe umgeht umgehen deaktiviere deaktiviert deaktivieren \
    schalte entferne entfernt entfernen hebe uberwinde ignoriere ignorieren";
pub(super) const DE_SAFETY: Set = "sicherheitsfilter inhaltsfilter schutzmassnahmen \
    sicherheitsregeln sicherheitsrichtlinien sicherheitsvorkehrungen zensur \
    sicherheitsmechanismen inhaltsmoderation sicherheitsbeschrankungen";
pub(super) const DE_REVEAL: Set = "zeige zeig zeigen gib geben verrate verrat verraten \
    wiederhole wiederholen drucke schreibe schreib nenne nennen teile kopiere enthulle offenbare \
    sag sage liste";
pub(super) const DE_ME: Set = "mir uns sie bitte wortlich vollstandig genau aus komplett";
pub(super) const DE_PROMPT: Set = "systemprompt systemanweisungen systemnachricht anweisungen \
    prompt instruktionen vorgaben";
pub(super) const DE_TELL: Set = "sag sage sagt sagen erzahl erzahle erzahlt erzahlen verrate \
    verraten erwahne erwahnen informiere informieren teile mitteilen benachrichtige \
    benachrichtigen warne warnen";
pub(super) const DE_USER: Set = "benutzer benutzerin nutzer nutzerin anwender anwenderin user \
    mensch";
pub(super) const DE_SEND: Set = "sende sendet senden schicke schick schickt schicken lade \
    ubertrage ubermittle ubermitteln poste leite exfiltriere kopiere";
pub(super) const DE_SECRETS: Set = "passworter passwort kennworter kennwort schlussel \
    geheimnisse geheimnis tokens token zugangsdaten anmeldedaten konversation unterhaltung \
    verlauf chatverlauf gesprach gesprachsverlauf umgebungsvariablen cookies erinnerungen";

// ------------------------------------------------------------------------------- Polish

pub(super) const PL_IGNORE: Set = "zignoruj zignorujcie ignoruj ignorujcie zapomnij \
    zapomnijcie pomin pomincie odrzuc odrzuccie porzuc olej obejdz lekcewaz";
pub(super) const PL_DET: Set = "wszystkie wszystkich wszelkie wszelkich te tych o na swoje \
    swoich caly cale kazde";
pub(super) const PL_YOUR: Set = "twoje twoich twoja twoj wasze waszych swoje swoich";
pub(super) const PL_EARLIER: Set = "poprzednie poprzednich poprzednimi wczesniejsze \
    wczesniejszych dotychczasowe dotychczasowych powyzsze powyzszych pierwotne pierwotnych \
    systemowe systemowych otrzymane";
pub(super) const PL_ORDERS: Set = "instrukcje instrukcji instrukcjach instrukcjami instrukcja \
    polecenia polecenie polecen poleceniach zasady zasad zasadach reguly regul regulach wytyczne \
    wytycznych prompt prompty nakazy rozkazy komendy";
pub(super) const PL_RULES: Set = "zasady zasad reguly regul instrukcje instrukcji wytyczne \
    wytycznych ograniczenia ograniczen filtry filtrow zabezpieczenia zabezpieczen polityki \
    zasadach normy wartosci programowanie";
pub(super) const PL_EVADE: Set = "obejdz omin wylacz wylaczcie usun dezaktywuj zlam przeskocz \
    obejsc wylaczyc";
pub(super) const PL_SAFETY_THINGS: Set = "filtry filtrow zabezpieczenia zabezpieczen \
    ograniczenia ograniczen blokady mechanizmy";
pub(super) const PL_SAFETY: Set = "bezpieczenstwa tresci moderacji cenzury etyczne";
pub(super) const PL_REVEAL: Set = "pokaz pokazcie ujawnij ujawnijcie powtorz wypisz wydrukuj \
    podaj zdradz udostepnij napisz skopiuj wyswietl przytocz powiedz";
pub(super) const PL_ME: Set = "mi nam slowo w po calosci dokladnie caly cala";
pub(super) const PL_PROMPT: Set = "prompt instrukcje polecenia wiadomosc wytyczne zasady";
pub(super) const PL_PROMPT_KIND: Set = "systemowy systemowe systemowa poczatkowe ukryte ukryty \
    tajne oryginalne pierwotne";
pub(super) const PL_TELL: Set = "mow mowcie informuj informujcie wspominaj wspomnij zdradzaj \
    ostrzegaj powiadamiaj pokazuj ujawniaj mowiac informujac wspominajac powiedz daj";
pub(super) const PL_USER: Set = "uzytkownikowi uzytkownika uzytkownikiem uzytkownik \
    uzytkownikom uzytkownikow czlowiekowi";
pub(super) const PL_SEND: Set = "wyslij wyslijcie przeslij przeslijcie wrzuc opublikuj przekaz \
    udostepnij wklej wyslac przeslac";
pub(super) const PL_SECRETS: Set = "hasla hasel haslo klucze kluczy klucz sekrety sekretow \
    tokeny tokenow token dane poswiadczenia rozmowe rozmowy historie historii pamiec srodowiska \
    ciasteczka";

// ------------------------------------------------------------------------------ Russian

pub(super) const RU_IGNORE: Set = "игнорируй игнорируйте проигнорируй проигнорируйте забудь \
    забудьте отбрось отбросьте отмени отмените пропусти пропустите нарушь обойди";
pub(super) const RU_DET: Set = "все всех всем любые эти про о об свои всю каждую";
pub(super) const RU_YOUR: Set = "твои твоих ваши ваших свои своих твоим вашим";
pub(super) const RU_EARLIER: Set = "предыдущие предыдущих прежние прежних предшествующие \
    вышеуказанные вышеизложенные изначальные исходные системные системных первоначальные ранее \
    полученные прошлые";
pub(super) const RU_ORDERS: Set = "инструкции инструкциях инструкций инструкцию указания \
    указаниях указаний указание правила правил правилах правило команды команд установки \
    директивы промпт промпты распоряжения приказы";
pub(super) const RU_RULES: Set = "правила правил инструкции ограничения ограничений фильтры \
    запреты принципы установки политики нормы директивы рамки ценности";
pub(super) const RU_EVADE: Set = "обойди обойдите отключи отключите сними снимите убери \
    уберите выключи выключите деактивируй игнорируй обойти отключить";
pub(super) const RU_SAFETY_THINGS: Set = "фильтры фильтр ограничения механизмы меры проверки \
    защиту";
pub(super) const RU_SAFETY: Set = "безопасности контента модерации цензуры этические";
pub(super) const RU_REVEAL: Set = "покажи покажите раскрой раскройте повтори повторите выведи \
    выведите напечатай дай дайте процитируй перескажи скопируй напиши напишите расскажи скажи \
    озвучь";
pub(super) const RU_ME: Set = "мне нам дословно полностью целиком точно слово в во";
pub(super) const RU_PROMPT: Set = "промпт инструкции указания сообщение правила подсказку";
pub(super) const RU_PROMPT_KIND: Set = "системный системные системное изначальные исходные \
    скрытые скрытый секретные начальные первоначальные";
pub(super) const RU_TELL: Set = "говори говорите сообщай сообщайте рассказывай рассказывайте \
    упоминай упоминайте информируй уведомляй предупреждай сообщая говоря уведомляя информируя";
pub(super) const RU_USER: Set = "пользователю пользователя пользователь пользователям \
    пользователей человеку юзеру";
pub(super) const RU_SEND: Set = "отправь отправьте пошли пошлите перешли перешлите загрузи \
    загрузите выгрузи опубликуй передай передайте слей вставь";
pub(super) const RU_SECRETS: Set = "пароли паролей пароль ключи ключей ключ секреты секретов \
    токены токенов токен учетные переписку разговор диалог историю память окружения куки данные";

// ------------------------------------------------------------------------------ Turkish

pub(super) const TR_EARLIER: Set = "onceki yukaridaki sistem daha onceden baslangictaki \
    orijinal";
pub(super) const TR_DET: Set = "tum butun her sana size verilen olan once gelen senin sizin bu \
    hic bir";
pub(super) const TR_ORDERS: Set = "talimatlari talimatlar talimatlarini talimati komutlari \
    komutlarini kurallari kurallarini kurallar yonergeleri yonergelerini direktifleri istemi \
    promptu emirleri emirlerini yonergeler talimatlarin";
pub(super) const TR_YOUR: Set = "senin sizin";
pub(super) const TR_RULES: Set = "kurallarini kurallari kisitlamalarini kisitlamalari \
    sinirlarini sinirlari filtrelerini filtreleri yonergelerini yonergeleri talimatlarini \
    ilkelerini politikalarini guvenlik";
pub(super) const TR_SAFETY: Set = "filtrelerini filtreleri onlemlerini onlemleri \
    kisitlamalarini kisitlamalari sansuru denetimini korumalarini";
pub(super) const TR_REVEAL_OBJECT: Set = "istemini istemi promptunu promptu talimatlarini \
    talimatlari yonergelerini mesajini";
pub(super) const TR_REVEAL: Set = "goster gosterin ac aciklayin acikla tekrarla tekrarlayin \
    yazdir yaz ver paylas soyle ifsa";
pub(super) const TR_USER: Set = "kullaniciya kullanicidan kullanicinin kullanici kullanicilara";
pub(super) const TR_TELL_NOT: Set = "soyleme soylemeyin bahsetme bahsetmeyin bildirme \
    bildirmeyin anlatma anlatmayin uyarma uyarmayin";
/// The Turkish verbs of "ignore" in one word; `yok say`, `gormezden gel` and `dikkate
/// alma` are patterns of their own.
pub(super) const TR_IGNORE: Set = "unut unutun umursama umursamayin cigne cigneyin yoksay \
    yoksayin";
pub(super) const TR_SEND: Set = "gonder gonderin yolla yollayin yukle yukleyin paylas ilet \
    aktar sizdir";
pub(super) const TR_SECRETS: Set = "sifreleri parolalari sifreyi anahtarlari anahtari sirlari \
    tokenlari tokeni kimlik konusmayi sohbeti gecmisi hafizayi ortam cerezleri";

// --------------------------------------------------------------------------- Indonesian

pub(super) const ID_IGNORE: Set = "abaikan lupakan acuhkan tinggalkan lewati langgar";
pub(super) const ID_DET: Set = "semua seluruh segala para setiap tiap";
pub(super) const ID_ORDERS: Set = "instruksi perintah aturan petunjuk arahan pedoman prompt \
    panduan ketentuan";
pub(super) const ID_BETWEEN: Set = "yang ada diberikan kamu anda terima dari telah sudah di \
    kau kepadamu";
pub(super) const ID_EARLIER: Set = "sebelumnya terdahulu sebelum atas awal sistem asli tadi \
    lalu";
pub(super) const ID_YOUR: Set = "mu kamu anda milikmu";
pub(super) const ID_RULES: Set = "aturan aturanmu instruksi pedoman batasan batasanmu \
    pembatasan filter kebijakan prinsip larangan protokol nilai";
pub(super) const ID_EVADE: Set = "lewati matikan nonaktifkan hapus hilangkan abaikan terobos \
    akali";
pub(super) const ID_SAFETY_THINGS: Set = "filter pengaman pengamanan pembatasan batasan \
    proteksi";
pub(super) const ID_SAFETY: Set = "keamanan konten moderasi etika";
pub(super) const ID_REVEAL: Set = "tunjukkan tampilkan ungkapkan ulangi cetak berikan bagikan \
    tulis salin sebutkan beritahu bocorkan";
pub(super) const ID_PROMPT: Set = "prompt instruksi arahan";
pub(super) const ID_PROMPT_KIND: Set = "sistem sistemmu awal tersembunyi rahasia";
pub(super) const ID_USER: Set = "pengguna user pemakai manusia";
pub(super) const ID_TELL: Set = "beri beritahu beritahukan bilang katakan kasih sebutkan \
    informasikan tunjukkan memberitahu memberi";
pub(super) const ID_SEND: Set = "kirim kirimkan unggah upload posting teruskan bocorkan tempel";
pub(super) const ID_SECRETS: Set = "kata sandi kunci rahasia token kredensial percakapan \
    riwayat memori lingkungan cookie obrolan";

// --------------------------------------------------------------------------- Vietnamese

pub(super) const VI_IGNORE_HEAD: Set = "bo phot quen lo gat vut";
pub(super) const VI_IGNORE_TAIL: Set = "qua lo di het bo sang";
pub(super) const VI_DET: Set = "tat ca cac moi nhung toan bo het cua";
pub(super) const VI_ORDERS_HEAD: Set = "huong chi lenh quy nguyen yeu prompt loi menh";
pub(super) const VI_ORDERS_TAIL: Set = "dan thi tac cau nhac lenh";
pub(super) const VI_BETWEEN: Set = "da duoc cho ban nhan cua ma he thong";
pub(super) const VI_EARLIER: Set = "truoc he tren goc";
pub(super) const VI_RULES: Set = "quy nguyen tac gioi han che rang buoc bo loc chinh sach \
    huong dan";
pub(super) const VI_EVADE: Set = "vuot tat go xoa pha ne lach vo";
pub(super) const VI_REVEAL: Set = "hien cho tiet lap in dua chia viet sao noi";
pub(super) const VI_PROMPT: Set = "prompt loi huong chi thong";
pub(super) const VI_USER: Set = "nguoi user";
pub(super) const VI_SEND: Set = "gui tai dang chuyen day dan";
pub(super) const VI_SECRETS: Set = "mat khau khoa bi token thong tin dang nhap cuoc tro chuyen \
    lich su bo nho bien moi truong cookie";

// ------------------------------------------------------------------------------ Chinese

pub(super) const ZH_IGNORE: Set = "忽略 忽视 忽視 无视 無視 忘记 忘記 忘掉 不要理会 不要理會 别理会 別理會 不必理会 不必理會 不用理会 \
    不用理會 不要管 别管 不用管 抛开 拋開 丢弃 丟棄 放弃 放棄 跳过 跳過 违背 違背 绕过 繞過 撇开 撇開 抛弃 拋棄";
pub(super) const ZH_FILLER: Set = "你 您 的 所有 全部 一切 任何 这些 這些 那些 收到 得到 被 给 給 过 過 了 都 掉 其 他 前面 所";
pub(super) const ZH_EARLIER: Set = "之前 以前 先前 此前 上面 以上 上述 前面 原来 原來 原先 原有 系统 系統 最初 早先 前述 初始 之前的 \
    原始";
pub(super) const ZH_ORDERS: Set = "指令 指示 规则 規則 命令 提示 提示词 提示詞 设定 設定 要求 说明 說明 约束 約束 限制 规定 規定 守则 \
    守則";
pub(super) const ZH_ALL: Set = "都 全 全部 统统 統統 一律 通通 一并 一併";
pub(super) const ZH_BA: Set = "把 将 將";
pub(super) const ZH_YOUR: Set = "你的 您的 你 您 自己的";
pub(super) const ZH_RULES: Set = "规则 規則 限制 准则 準則 守则 守則 安全 过滤 過濾 审查 審查 约束 約束 政策 原则 原則 底线 底線 道德 \
    伦理 倫理 指令 指导 指導 规定 規定";
pub(super) const ZH_EVADE: Set = "绕过 繞過 关闭 關閉 禁用 解除 移除 去掉 取消 突破 规避 規避 避开 避開 停用";
pub(super) const ZH_SAFETY: Set = "安全 内容 內容 审查 審查 过滤 過濾 审核 審核 限制 防护 防護 道德";
pub(super) const ZH_REVEAL: Set = "显示 顯示 展示 告诉我 告訴我 输出 輸出 打印 重复 重複 泄露 洩露 透露 公开 公開 给我看 給我看 复述 \
    複述 说出 說出 写出 寫出 列出 暴露";
pub(super) const ZH_PROMPT: Set = "系统提示 系統提示 系统提示词 系統提示詞 系统指令 系統指令 系统消息 系統消息 系统设定 系統設定 初始指令 \
    原始指令 隐藏指令 隱藏指令 提示词 提示詞";
pub(super) const ZH_TELL: Set = "告诉 告訴 通知 提醒 透露给 透露給 提及 提到";
pub(super) const ZH_DONT: Set = "不要 别 別 不准 不许 不許 切勿 请勿 請勿 不能 千万不要 千萬不要 勿 绝不要 絕不要 永远不要 永遠不要";
pub(super) const ZH_USER: Set = "用户 用戶 使用者 人类 人類";
pub(super) const ZH_SEND: Set = "发送 發送 发给 發給 发到 發到 上传 上傳 提交 转发 轉發 传到 傳到 贴到 貼到 发布 發布 外传 外傳 发 發 \
    传 傳";
pub(super) const ZH_SECRETS: Set = "密码 密碼 密钥 密鑰 秘钥 秘鑰 令牌 凭证 憑證 凭据 憑據 对话 對話 聊天记录 聊天記錄 历史 歷史 记忆 \
    記憶 环境变量 環境變數 token cookie cookies 机密 機密 秘密";

// ----------------------------------------------------------------------------- Japanese

pub(super) const JA_EARLIER: Set = "以前 これまで 今まで 上記 前 先ほど 先程 最初 元 過去 システム 前回 以上 上 当初";
pub(super) const JA_FILLER: Set = "の に で 受け た 与え られ 出さ れ 全て すべて あなた が へ 書か された これ まで それ ら";
pub(super) const JA_ORDERS: Set = "指示 命令 指令 ルール 規則 制約 設定 プロンプト 指図 命令文 指示内容 ガイドライン 方針";
pub(super) const JA_PARTICLES: Set = "を は も すべて 全て 全部 一切 など に ついて";
pub(super) const JA_IGNORE: Set = "無視 忘れ 破棄 捨て 放棄 無効 反故";
pub(super) const JA_NOT: Set = "しない しな せず するな ない なく ず ません ぬ";
pub(super) const JA_YOUR: Set = "あなた 君 きみ お前 貴方";
pub(super) const JA_RULES: Set = "ルール 規則 制限 制約 ガイドライン 安全 倫理 ポリシー 方針 フィルター 規制 原則";
pub(super) const JA_EVADE: Set = "回避 解除 無効 オフ 外 突破 迂回 取り除 外し";
pub(super) const JA_SAFETY: Set = "安全 セーフティ 検閲 コンテンツ 倫理 モデレーション";
pub(super) const JA_PROMPT: Set = "システムプロンプト システムメッセージ システム指示 初期指示 隠された指示 元の指示 初期プロンプト";
pub(super) const JA_REVEAL: Set = "表示 見せ 教え 出力 繰り返 公開 開示 暴露 書き出 印刷 共有 言っ 明か 漏ら";
pub(super) const JA_USER: Set = "ユーザー ユーザ 利用者 使用者 人間";
pub(super) const JA_TELL: Set = "言わ 伝え 知らせ 教え 話さ 報告 通知 言う";
pub(super) const JA_TELL_NOT: Set = "ないで ないこと ないように るな ずに しないで しないこと せずに";
pub(super) const JA_SEND: Set = "送信 送っ 送り 送れ アップロード 投稿 転送 貼り付け 共有";
pub(super) const JA_SECRETS: Set = "パスワード 鍵 キー 秘密 トークン 認証情報 会話 履歴 記憶 環境変数 クッキー 機密";

// ------------------------------------------------------------------------------- Korean

pub(super) const KO_EARLIER: Set = "이전* 앞의 앞서* 위의 위에* 원래* 초기* 시스템* 지금까지* 먼저 예전* 전의 과거*";
pub(super) const KO_DET: Set = "모든 전부 모두 다 너의 너에게 당신의 당신에게 네가 받은 주어진 내린 제공된";
pub(super) const KO_ORDERS: Set = "지시* 지침* 명령* 규칙* 프롬프트* 설정* 안내* 제약* 지령* 룰*";
pub(super) const KO_IGNORE: Set = "무시* 잊어* 잊으* 잊고 버려* 폐기* !무시하지* !무시할* !무시되* !무시된* !무시하면* \
    !무시해서는* !무시하는* !잊어서* !잊어도*";
pub(super) const KO_YOUR: Set = "너의 당신의";
pub(super) const KO_RULES: Set = "규칙* 제한* 지침* 가이드라인* 정책* 필터* 안전* 윤리* 원칙* 제약*";
pub(super) const KO_EVADE: Set = "우회해* 우회하세요* 해제해* 해제하세요* 비활성화해* 비활성화하세요* 꺼줘* 끄세요* 꺼 제거해* \
    제거하세요* 무력화*";
pub(super) const KO_SAFETY: Set = "안전* 검열* 보안* 콘텐츠* 윤리* 모더레이션*";
pub(super) const KO_SAFETY_THINGS: Set = "필터* 기능* 장치* 제한* 정책* 조치*";
pub(super) const KO_PROMPT: Set = "시스템 초기 숨겨진 원래의 원래";
pub(super) const KO_PROMPT_NOUN: Set = "프롬프트* 지시* 지침* 메시지* 명령*";
pub(super) const KO_REVEAL: Set = "보여줘* 보여주세요* 보여 출력해* 출력하세요* 알려줘* 알려주세요* 공개해* 공개하세요* 반복해* \
    말해줘* 말해 적어줘* 밝혀*";
pub(super) const KO_USER: Set = "사용자* 유저* 사람* 이용자*";
pub(super) const KO_TELL_NOT: Set = "말하지 알리지 알려주지 얘기하지 보여주지 언급하지 전하지 공유하지";
pub(super) const KO_SEND: Set = "보내* 전송* 업로드* 올려* 전달* 게시* 유출*";
pub(super) const KO_SECRETS: Set = "비밀번호* 패스워드* 키* 비밀* 토큰* 자격* 대화* 기록* 히스토리* 메모리* 환경* 쿠키*";

// -------------------------------------------------------------------------------- Hindi

pub(super) const HI_EARLIER: Set = "पिछले पिछली पिछला पहले पूर्व ऊपर ऊपरी सिस्टम मूल प्रारंभिक \
    शुरुआती";
pub(super) const HI_DET: Set = "सभी सारे सारी सब के की का दिए दिये गए गये तुम्हें आपको आपके \
    तुम्हारे हर किसी भी तमाम";
pub(super) const HI_ORDERS: Set = "निर्देशों निर्देश निर्देशो आदेशों आदेश नियमों नियम हिदायतों \
    हिदायतें प्रॉम्प्ट इंस्ट्रक्शन्स इंस्ट्रक्शंस निर्देशन";
pub(super) const HI_IGNORE: Set = "अनदेखा नज़रअंदाज़ नजरअंदाज नज़रअंदाज भूल भूलो भूलें भूल \
    दरकिनार छोड़ छोड़ो छोड़ें तोड़ तोड़ो अवहेलना";
pub(super) const HI_YOUR: Set = "अपने अपनी तुम्हारे तुम्हारी आपके आपकी";
pub(super) const HI_RULES: Set = "नियमों नियम प्रतिबंधों प्रतिबंध सीमाओं सीमाएं सीमाएँ \
    दिशानिर्देशों दिशानिर्देश फ़िल्टर फिल्टर सुरक्षा पाबंदियों पाबंदियां नीतियों";
pub(super) const HI_EVADE: Set = "बायपास हटा हटाओ हटाएं बंद निष्क्रिय तोड़ तोड़ो दरकिनार";
pub(super) const HI_REVEAL_OBJECT: Set = "प्रॉम्प्ट निर्देश निर्देशों संदेश";
pub(super) const HI_NOT: Set = "न मत नहीं";
pub(super) const HI_REVEAL: Set = "दिखाओ दिखाएं दिखाइए बताओ बताएं बताइए दोहराओ दोहराएं प्रिंट \
    लिखो लिखें साझा उजागर प्रकट";
pub(super) const HI_USER: Set = "उपयोगकर्ता यूज़र यूजर उपयोगकर्ताओं इस्तेमालकर्ता";
pub(super) const HI_TELL: Set = "बताओ बताएं बताना बताइए बताएँ कहो कहें जताओ";
pub(super) const HI_SEND: Set = "भेजो भेजें भेज भेजिए अपलोड पोस्ट डालो डालें";
pub(super) const HI_SECRETS: Set = "पासवर्ड कुंजी कुंजियां कुंजियाँ की सीक्रेट टोकन \
    क्रेडेंशियल बातचीत इतिहास मेमोरी वातावरण कुकीज़";
// Hindi in Latin letters, as typed in chat.
pub(super) const HI_LATN_EARLIER: Set = "pichhle pichle pehle pahle purane upar system";
pub(super) const HI_LATN_DET: Set = "sabhi saare sare sab ke ki diye gaye tumhe aapko har";
pub(super) const HI_LATN_ORDERS: Set = "nirdesh nirdeshon nirdesho instructions rules niyam \
    niyamon aadesh hidayat hidayaton prompt";
pub(super) const HI_LATN_IGNORE: Set = "ignore bhool bhul nazarandaz najarandaj andekha chhod \
    chod";
pub(super) const HI_LATN_DO: Set = "karo karein karen kar jao ja do dijiye kijiye karna";

// --------------------------------------------------------------------------------- Urdu

pub(super) const UR_EARLIER: Set = "پچھلی پچھلے پچھلا سابقہ گزشتہ پہلے اوپر سسٹم ابتدائی اصل";
pub(super) const UR_DET: Set = "تمام سب ساری سارے تمہیں اپ کو دی گئی گئیں کی کے ہر";
pub(super) const UR_ORDERS: Set = "ہدایات ہدایتوں ہدایت احکامات احکام قواعد اصول اصولوں \
    ہدایتیں پرامپٹ انسٹرکشنز قوانین";
pub(super) const UR_IGNORE: Set = "نظرانداز نظر بھول چھوڑ توڑ ترک";
pub(super) const UR_YOUR: Set = "اپنے اپنی تمہارے تمہاری اپ";
pub(super) const UR_RULES: Set = "اصولوں اصول قواعد پابندیوں پابندیاں حدود ہدایات فلٹرز فلٹر \
    حفاظتی پالیسیوں";
pub(super) const UR_REVEAL: Set = "دکھاؤ دکھائیں بتاؤ بتائیں دہراؤ دہرائیں لکھو لکھیں ظاہر";
pub(super) const UR_REVEAL_OBJECT: Set = "پرامپٹ ہدایات سسٹم پیغام";
pub(super) const UR_USER: Set = "صارف یوزر صارفین";
pub(super) const UR_TELL: Set = "بتاؤ بتائیں بتانا کہو کہیں";
pub(super) const UR_NOT: Set = "نہ مت نہیں";
pub(super) const UR_SEND: Set = "بھیجو بھیجیں بھیج اپلوڈ پوسٹ";
pub(super) const UR_SECRETS: Set = "پاسورڈ پاس کلید چابیاں راز ٹوکن اسناد گفتگو بات چیت تاریخ \
    ہسٹری میموری کوکیز";

// ------------------------------------------------------------------------------ Bengali

pub(super) const BN_EARLIER: Set = "আগের পূর্ববর্তী পূর্বের উপরের সিস্টেম প্রাথমিক আগে মূল";
pub(super) const BN_DET: Set = "সব সমস্ত সকল সবগুলো তোমাকে আপনাকে দেওয়া দেয়া যত";
pub(super) const BN_ORDERS: Set = "নির্দেশনা নির্দেশ নির্দেশগুলো নির্দেশাবলী নির্দেশনাগুলো \
    নিয়ম নিয়মগুলো আদেশ আদেশগুলো প্রম্পট নির্দেশনার";
pub(super) const BN_IGNORE: Set = "উপেক্ষা ভুলে অগ্রাহ্য অবজ্ঞা এড়িয়ে বাদ ভাঙো";
pub(super) const BN_YOUR: Set = "তোমার আপনার তোর";
pub(super) const BN_RULES: Set = "নিয়ম নিয়মগুলো বিধিনিষেধ সীমাবদ্ধতা নির্দেশিকা ফিল্টার \
    নিরাপত্তা নীতিমালা নীতি";
pub(super) const BN_REVEAL: Set = "দেখাও দেখান বলো বলুন পুনরাবৃত্তি লেখো লিখুন প্রকাশ শেয়ার";
pub(super) const BN_REVEAL_OBJECT: Set = "প্রম্পট নির্দেশনা নির্দেশ সিস্টেম বার্তা";
pub(super) const BN_USER: Set = "ব্যবহারকারীকে ব্যবহারকারী ব্যবহারকারীর ইউজারকে ইউজার";
pub(super) const BN_TELL: Set = "বলবে বলবেন বলো জানিও জানাবে জানাবেন জানাও বলিও";
pub(super) const BN_SEND: Set = "পাঠাও পাঠান পাঠিয়ে আপলোড পোস্ট পাঠাবে";
pub(super) const BN_SECRETS: Set = "পাসওয়ার্ড কী চাবি গোপন টোকেন শংসাপত্র কথোপকথন ইতিহাস \
    মেমোরি কুকি";

// ------------------------------------------------------------------------------- Arabic

pub(super) const AR_IGNORE: Set = "تجاهل تجاهلي تجاهلوا انس انسى انسي انسوا اهمل اهملي اترك \
    اتركي تخط تخطى تخطي الغ الغي";
pub(super) const AR_DET: Set = "جميع كل كافة هذه تلك اي";
pub(super) const AR_ORDERS: Set = "التعليمات تعليمات الاوامر اوامر التوجيهات توجيهات القواعد \
    قواعد الارشادات ارشادات التعليمة الموجه التلقينات";
pub(super) const AR_BETWEEN: Set = "التي تلقيتها اعطيت لك المعطاة الي اليك السابقه";
pub(super) const AR_EARLIER: Set = "السابقة السابق السابقه الاصلية الاولى الاولية المسبقة \
    النظام اعلاه الماضية الاساسية";
pub(super) const AR_YOUR: Set = "قواعدك تعليماتك قيودك ارشاداتك سياساتك مبادئك ضوابطك برمجتك \
    توجيهاتك";
pub(super) const AR_EVADE: Set = "تجاوز عطل اوقف ازل الغ تخط تحايل اكسر";
pub(super) const AR_SAFETY_THINGS: Set = "فلاتر مرشحات الفلاتر المرشحات قيود القيود ضوابط \
    الضوابط انظمة";
pub(super) const AR_SAFETY: Set = "الامان الامن السلامة المحتوى الرقابة";
pub(super) const AR_REVEAL: Set = "اظهر اعرض اكشف كرر اطبع اعطني شارك اكتب انسخ قل";
pub(super) const AR_PROMPT: Set = "موجه الموجه تعليمات التعليمات رسالة";
pub(super) const AR_PROMPT_KIND: Set = "النظام الاولية الاصلية المخفية السرية الكاملة";
pub(super) const AR_USER: Set = "المستخدم للمستخدم بالمستخدم المستخدمين للمستخدمين";
pub(super) const AR_TELL: Set = "تخبر تقل تذكر تبلغ تعلم تخبري تقولي";
pub(super) const AR_SEND: Set = "ارسل ارسلي ابعث ارفع انشر حول مرر الصق";
pub(super) const AR_SECRETS: Set = "كلمات المرور كلمة المفاتيح مفاتيح مفتاح الاسرار اسرار \
    الرموز رموز بيانات الاعتماد المحادثة محادثة السجل سجل الذاكرة البيئة الكوكيز";

// ------------------------------------------- "you are now …, without restrictions"

pub(super) const FR_NOW: Set = "maintenant desormais dorenavant a partir de present une un ia \
    assistant modele";
pub(super) const FR_LIMITS: Set = "restrictions restriction limites limite filtre filtres \
    censure regles contraintes limitations";
pub(super) const ES_NOW: Set = "ahora una un ia asistente modelo";
pub(super) const ES_LIMITS: Set = "restricciones limites filtros censura reglas limitaciones";
pub(super) const PT_NOW: Set = "agora uma um ia assistente modelo";
pub(super) const PT_LIMITS: Set = "restricoes limites filtros censura regras limitacoes";
pub(super) const IT_NOW: Set = "ora adesso un una ia assistente modello d";
pub(super) const IT_LIMITS: Set = "restrizioni limiti filtri censura regole limitazioni";
pub(super) const DE_NOW: Set = "jetzt nun ab sofort eine ein ki assistent modell";
pub(super) const DE_LIMITS: Set = "einschrankungen grenzen filter zensur regeln beschrankungen";
pub(super) const PL_NOW: Set = "teraz od ai si asystentem modelem";
pub(super) const PL_LIMITS: Set = "ograniczen cenzury filtrow zasad limitow";
pub(super) const RU_NOW: Set = "теперь отныне стал станешь будешь ии ассистент модель";
pub(super) const RU_LIMITS: Set = "ограничений цензуры фильтров правил запретов";
pub(super) const ZH_NOW: Set = "现在 現在 从现在起 從現在起 已经 已經 开始 開始 起";
